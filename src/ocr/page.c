/* The page policy: how an image is prepared for the pipeline (scaled, framed by a margin), a page
 * on its side read a quarter turned too, the lines' words, and the page's reading order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/engine_internal.h"
#include "ocr/layout.h"
#include "ocr/net_io.h"
#include "ocr/preprocess.h"
#include "ocr/word_boxes.h"
#include "ocr/workers.h"

/* The words of a line's reading (word_boxes.h), boxes in the image the pipeline sees: the crop
 * turned as that reading was (crop.flip follows the text kept), at its input width. */
static int line_words(const struct line *l, struct ppocr_line *o)
{
    const struct image_crop *c = &l->crop;
    const int input_w = l->text.input_width;
    struct word_geometry g = {
        .crop_w = c->width, .crop_h = c->height, .rotate = c->rotate, .flip = c->flip, .input_w = input_w};
    memcpy(g.src_from_dst, c->src_from_dst, sizeof(g.src_from_dst));
    g.resized_w = c->rotate ? image_resized_width(c->height, c->width, REC_HEIGHT, input_w)
                            : image_resized_width(c->width, c->height, REC_HEIGHT, input_w);
    return ocr_words_make(&l->text, &g, &o->words, &o->n_words);
}

/* How an image is prepared for detection beyond PaddleOCR's pipeline: small images are scaled
 * up so that their text reaches the sizes the detector was trained on, and a margin in the
 * border's colour is added so that text touching the edges (word crops) is found. */
struct prepare {
    double scale; /* 1: none */
    int margin;   /* pixels on every side, after scaling */
};

static struct prepare detection_prepare(const struct ppocr_engine *e, const struct ppocr_image *img)
{
    struct prepare p = {1.0, 0};
    /* A very large image is scaled down to ENGINE_MAX_PIXELS (the detector sees at most 960
     * pixels a side anyway, the recogniser 48 pixels a line), and in every mode to what one storage
     * buffer of the device holds: it could not be read at all otherwise. */
    double limit = (double)e->device.max_buffer_bytes / 3.0;
    if (!e->opt.paddle_parity)
        limit = fmin(limit, ENGINE_MAX_PIXELS);
    double pixels = (img->width + 2.0 * DET_MARGIN) * (img->height + 2.0 * DET_MARGIN);
    if (pixels > limit)
        p.scale = sqrt(limit / pixels) * 0.98;
    if (e->opt.paddle_parity)
        return p;
    p.margin = DET_MARGIN;
    int short_side = img->width < img->height ? img->width : img->height;
    int long_side = img->width < img->height ? img->height : img->width;
    if (p.scale == 1.0 && short_side < DET_MIN_SIDE) {
        p.scale = (double)DET_MIN_SIDE / short_side;
        if (long_side * p.scale > e->opt.det_limit_side_len)
            p.scale = fmax(1.0, (double)e->opt.det_limit_side_len / long_side);
    }
    /* the framed page stays within the side limit: a page that reaches it gets a narrower margin */
    long scaled_long = lround(long_side * p.scale);
    if (scaled_long + 2 * p.margin > PPOCR_IMAGE_MAX_SIDE)
        p.margin = scaled_long >= PPOCR_IMAGE_MAX_SIDE ? 0 : (int)(PPOCR_IMAGE_MAX_SIDE - scaled_long) / 2;
    return p;
}

/* A point of the prepared image back in img, clipped to it. */
static void unprepare_point(int pt[2], struct prepare p, double sx, double sy, const struct ppocr_image *img)
{
    long x = lround((pt[0] - p.margin) / sx);
    long y = lround((pt[1] - p.margin) / sy);
    pt[0] = (int)(x < 0 ? 0 : x >= img->width ? img->width - 1 : x);
    pt[1] = (int)(y < 0 ? 0 : y >= img->height ? img->height - 1 : y);
}

/* One image of a run on its way through the pipeline: prepared, detected, its lines read together
 * with the other images' (ocr_read_lines), its result made. */
struct page {
    const struct ppocr_image *img; /* the caller's */
    struct ppocr_result *r;
    char *err;
    size_t err_len;
    int rc;
    struct prepare prep;
    double sx, sy;                 /* the scaled image's size over img's */
    struct ppocr_image scaled;     /* img scaled by prep.scale; bgr NULL when it is not */
    const struct ppocr_image *src; /* what goes to the device inside the margin: img or scaled */
    struct ppocr_image framed;     /* its size with the margin (its bytes are on the device only) */
    struct db_boxes boxes;
    struct line *lines; /* its lines' crops, before reading */
    int n_lines;
    int first; /* where its lines are in the run's */
};

static void page_free(struct page *p)
{
    free(p->scaled.bgr);
    p->scaled.bgr = NULL;
    db_boxes_free(&p->boxes);
    free(p->lines);
    p->lines = NULL;
    p->n_lines = 0;
}

static void page_fail(struct page *p)
{
    page_free(p);
    ppocr_result_free(p->r);
    p->rc = -1;
}

/* img scaled into out (its size set, its pixels allocated). A very large image's scaling is the
 * longest host step of its run, and holds the engine meanwhile: its rows are shared with the
 * engine's helpers, or, for an engine without any, with threads started for it. */
static int scale_image(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_image *out)
{
    struct ocr_workers *own = NULL, *workers = e->helpers;
    if (!workers && (double)out->width * out->height >= SCALE_SHARED_MIN_PIXELS &&
        ocr_workers_create(ocr_helper_count(), &own) == 0)
        workers = own; /* NULL where no helper could be started: this thread alone */
    const int rc =
        ocr_resize_linear_shared(img->bgr, img->width, img->height, out->bgr, out->width, out->height, 3, workers);
    ocr_workers_destroy(own);
    return rc;
}

/* The image the pipeline sees: img prepared (scaled, framed by the margin); *src is what goes to
 * the device inside the margin. */
static int page_prepare(struct ppocr_engine *e, struct page *p, const struct ppocr_image **src)
{
    const struct ppocr_image *img = p->img;
    p->prep = detection_prepare(e, img);
    *src = img;
    if (p->prep.scale != 1.0) {
        p->scaled = *img;
        p->scaled.width = (int)lround(img->width * p->prep.scale);
        p->scaled.height = (int)lround(img->height * p->prep.scale);
        p->scaled.bgr = malloc((size_t)p->scaled.width * p->scaled.height * 3);
        if (!p->scaled.bgr || scale_image(e, img, &p->scaled))
            return ocr_fail(p->err, p->err_len, "%s", "out of memory scaling the image");
        *src = &p->scaled;
    }
    p->sx = (double)(*src)->width / img->width;
    p->sy = (double)(*src)->height / img->height;
    const int margin = p->prep.margin;
    if ((*src)->width > PPOCR_IMAGE_MAX_SIDE - 2 * margin || (*src)->height > PPOCR_IMAGE_MAX_SIDE - 2 * margin)
        return ocr_fail(p->err, p->err_len, "%s", "the image is too large for the margin detection adds");
    return 0;
}

/* The image prepared and put in slot `slot` of the device, for detection. */
static int page_upload(struct ppocr_engine *e, struct page *p, int slot)
{
    const double t0 = ocr_now_ms();
    const int rc = page_prepare(e, p, &p->src);
    p->r->wall_ms[PPOCR_STAGE_UPLOAD] += ocr_now_ms() - t0; /* a very large image's scaling is its part */
    if (rc)
        return -1;
    const int margin = p->prep.margin;
    p->framed = (struct ppocr_image){
        .width = p->src->width + 2 * margin, .height = p->src->height + 2 * margin, .had_alpha = p->src->had_alpha};
    p->r->width = p->framed.width;
    p->r->height = p->framed.height;
    return ocr_upload(e, slot, p->src, margin, p->r, p->err, p->err_len);
}

/* After the page's detection: small print read again in strips, and its boxes' crops as lines
 * (line.image = slot). */
static int page_lines(struct ppocr_engine *e, struct page *p, int slot)
{
    if (!e->opt.paddle_parity &&
        ocr_detect_strips(e, slot, p->src, p->prep.margin, &p->boxes, p->r, p->err, p->err_len))
        return -1;
    free(p->scaled.bgr); /* on the device now */
    p->scaled.bgr = NULL;
    if (p->boxes.count && !(p->lines = calloc(p->boxes.count, sizeof(*p->lines))))
        return ocr_fail(p->err, p->err_len, "%s", "out of memory");
    for (size_t b = 0; b < p->boxes.count; b++) {
        float pts[4][2];
        for (int k = 0; k < 4; k++) {
            pts[k][0] = (float)p->boxes.boxes[b].pts[k][0];
            pts[k][1] = (float)p->boxes.boxes[b].pts[k][1];
        }
        struct ocr_crop_plan plan;
        if (ocr_crop_plan_make(pts, &plan))
            continue; /* a degenerate box has nothing to read */
        struct line *l = &p->lines[p->n_lines++];
        memcpy(l->crop.src_from_dst, plan.src_from_dst, sizeof(plan.src_from_dst));
        l->crop.width = plan.width;
        l->crop.height = plan.height;
        l->crop.rotate = plan.rotate;
        l->image = slot;
        l->box = (int)b;
    }
    return 0;
}

/* The page's result from its read lines (their texts taken or freed), back in the caller's image. */
static int page_result(const struct ppocr_engine *e, struct page *p, struct line *lines)
{
    struct ppocr_result *r = p->r;
    int rc = 0;
    if (!(r->lines = calloc((size_t)p->n_lines + 1, sizeof(*r->lines))))
        rc = ocr_fail(p->err, p->err_len, "%s", "out of memory");
    for (int i = 0; i < p->n_lines; i++) {
        struct line *l = &lines[i];
        if (rc == 0 && l->text.text && l->text.score >= e->opt.drop_score) {
            struct ppocr_line *o = &r->lines[r->n_lines++];
            o->text = l->text.text;
            o->score = l->text.score;
            o->upside_down = l->crop.flip;
            memcpy(o->box, p->boxes.boxes[l->box].pts, sizeof(o->box));
            if (line_words(l, o))
                rc = ocr_fail(p->err, p->err_len, "%s", "out of memory");
            l->text.text = NULL;
        }
        ctc_text_free(&l->text);
    }
    if (rc)
        return -1;
    const struct ppocr_image *img = p->img;
    if (p->prep.scale != 1.0 || p->prep.margin) /* unscale, and clip what reaches into the margin */
        for (int i = 0; i < r->n_lines; i++)
            for (int k = 0; k < 4; k++) {
                unprepare_point(r->lines[i].box[k], p->prep, p->sx, p->sy, img);
                for (int w = 0; w < r->lines[i].n_words; w++)
                    unprepare_point(r->lines[i].words[w].box[k], p->prep, p->sx, p->sy, img);
            }
    r->width = img->width;
    r->height = img->height;
    return 0;
}

/* The read stages' times of a run shared among its pages by their lines. */
static void share_read_times(const struct ppocr_result *run, struct page *pages, int n, int total)
{
    static const int stages[] = {PPOCR_STAGE_CLS, PPOCR_STAGE_REC, PPOCR_STAGE_CTC};
    for (int i = 0; i < n; i++) {
        if (pages[i].rc)
            continue;
        const double share = total ? (double)pages[i].n_lines / total : 0; /* 1 for a page alone */
        for (size_t k = 0; k < sizeof(stages) / sizeof(stages[0]); k++) {
            pages[i].r->wall_ms[stages[k]] += run->wall_ms[stages[k]] * share;
            pages[i].r->gpu_ms[stages[k]] += run->gpu_ms[stages[k]] * share;
        }
    }
}

static int run_pages(struct ppocr_engine *e, struct page *pages, int n);

/* Each page of a run whose shared reading failed, read alone: one image's trouble (a line that
 * needs more memory than the device takes beside the others) is not the others'. */
static void run_pages_alone(struct ppocr_engine *e, struct page *pages, int n)
{
    for (int i = 0; i < n; i++)
        if (pages[i].rc == 0) {
            page_free(&pages[i]);
            run_pages(e, &pages[i], 1); /* which starts its result afresh */
        }
}

/* OCR of n pages (n <= OCR_IMAGE_SLOTS), page i in slot i, detected side by side and their lines
 * read together; each page's rc and error its own. Returns the count that failed. */
static int run_pages(struct ppocr_engine *e, struct page *pages, int n)
{
    struct det_image dets[OCR_IMAGE_SLOTS];
    int n_dets = 0;
    for (int i = 0; i < n; i++) {
        struct page *p = &pages[i];
        memset(p->r, 0, sizeof(*p->r));
        p->rc = 0;
        if (page_upload(e, p, i)) {
            page_fail(p);
            continue;
        }
        dets[n_dets++] = (struct det_image){.img = &p->framed,
                                            .slot = i,
                                            .limit = e->opt.det_limit_side_len,
                                            .unclip_ratio = e->opt.det_db_unclip_ratio,
                                            .boxes = &p->boxes,
                                            .r = p->r,
                                            .err = p->err,
                                            .err_len = p->err_len};
    }
    ocr_detect_many(e, dets, n_dets);
    int total = 0, failed = 0;
    for (int d = 0; d < n_dets; d++) {
        const int i = dets[d].slot;
        struct page *p = &pages[i];
        if (dets[d].rc || page_lines(e, p, i)) {
            page_fail(p);
            continue;
        }
        p->first = total;
        total += p->n_lines;
    }
    /* Room for a second reading of every line (see readings.c). */
    struct line *lines = calloc(2 * (size_t)total + 1, sizeof(*lines));
    char err[256] = "out of memory";
    struct ppocr_result run = {0};
    int n_readings = total, rc = lines ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++)
        if (pages[i].rc == 0 && pages[i].n_lines)
            memcpy(lines + pages[i].first, pages[i].lines, (size_t)pages[i].n_lines * sizeof(*lines));
    if (rc == 0 && total)
        rc = ocr_read_lines(e, lines, total, &n_readings, &run, err, sizeof(err));
    for (int i = total; lines && i < n_readings; i++)
        ctc_text_free(&lines[i].text);
    if (rc && n > 1) {
        for (int i = 0; lines && i < total; i++)
            ctc_text_free(&lines[i].text);
        free(lines);
        run_pages_alone(e, pages, n);
        for (int i = 0; i < n; i++)
            failed += pages[i].rc != 0;
        return failed;
    }
    share_read_times(&run, pages, n, total);
    for (int i = 0; i < n; i++) {
        struct page *p = &pages[i];
        if (p->rc)
            continue;
        if (rc) {
            snprintf(p->err, p->err_len, "%s", err);
            for (int k = 0; lines && k < p->n_lines; k++)
                ctc_text_free(&lines[p->first + k].text);
            page_fail(p);
        } else if (page_result(e, p, lines + p->first)) {
            page_fail(p);
        } else {
            page_free(p);
        }
        failed += p->rc != 0;
    }
    free(lines);
    return failed;
}

/* Whether most lines stand upright (taller than wide by half): text running up or down the page. */
static int mostly_vertical(const struct ppocr_result *r)
{
    int tall = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        double w = hypot(b[1][0] - b[0][0], b[1][1] - b[0][1]), h = hypot(b[3][0] - b[0][0], b[3][1] - b[0][1]);
        tall += h >= 1.5 * w;
    }
    return r->n_lines >= 2 && 2 * tall > r->n_lines;
}

/* Characters read, weighted by confidence: how much of a page a reading got. */
static double reading_weight(const struct ppocr_result *r)
{
    double sum = 0;
    for (int i = 0; i < r->n_lines; i++)
        sum += r->lines[i].score * (double)strlen(r->lines[i].text);
    return sum;
}

/* A page turned 90 degrees counter-clockwise back in the caller's frame: (x', y') -> (W-1-y', x'),
 * corners restarted at the top-left so they stay clockwise from there. Its reading order was made
 * in the turned frame, where its lines run across (the other quarter turn included: the layout
 * reads a page whose lines were read upside down from its far end). */
static void unturn_boxes(struct ppocr_result *r, int width)
{
    struct ppocr_span *spans[2] = {r->paragraphs, r->blocks};
    int n_spans[2] = {r->n_paragraphs, r->n_blocks};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n_spans[k]; i++) {
            struct ppocr_span *s = &spans[k][i], t = *s;
            s->x0 = width - 1 - t.y1;
            s->x1 = width - 1 - t.y0;
            s->y0 = t.x0;
            s->y1 = t.x1;
        }
    for (int i = 0; i < r->n_lines; i++) {
        int(*b)[2] = r->lines[i].box, t[4][2], first = 0;
        for (int k = 0; k < 4; k++) {
            t[k][0] = width - 1 - b[k][1];
            t[k][1] = b[k][0];
            if (t[k][0] + t[k][1] < t[first][0] + t[first][1])
                first = k;
        }
        for (int k = 0; k < 4; k++) {
            b[k][0] = t[(first + k) % 4][0];
            b[k][1] = t[(first + k) % 4][1];
        }
        /* a word's corners keep their order: its first is where its reading starts */
        for (int w = 0; w < r->lines[i].n_words; w++)
            for (int k = 0; k < 4; k++) {
                int *q = r->lines[i].words[w].box[k], x = q[0];
                q[0] = width - 1 - q[1];
                q[1] = x;
            }
    }
}

/* The page's structure and reading order (layout.h); PaddleOCR's order with --paddle-parity. On
 * failure the result is freed. */
static int lay_out(const struct ppocr_engine *e, struct ppocr_result *r, char *err, size_t err_len)
{
    double t0 = ocr_now_ms();
    int rc = e->opt.paddle_parity ? ocr_layout_single(r) : ocr_layout_page(r);
    r->wall_ms[PPOCR_STAGE_LAYOUT] += ocr_now_ms() - t0;
    if (rc == 0)
        return 0;
    ppocr_result_free(r);
    return ocr_fail(err, err_len, "%s", "out of memory ordering the page");
}

/* OCR of one image alone, in slot 0. */
static int run_one(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r, char *err,
                   size_t err_len)
{
    struct page p = {.img = img, .r = r, .err = err, .err_len = err_len};
    run_pages(e, &p, 1);
    return p.rc;
}

/* A page after its reading: its structure; a page whose lines mostly run up or down is read turned
 * a quarter too, and the better reading kept. */
static int page_finish(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r, char *err,
                       size_t err_len)
{
    int on_its_side = !e->opt.paddle_parity && mostly_vertical(r);
    if (lay_out(e, r, err, err_len))
        return -1;
    if (!on_its_side)
        return 0;

    /* A page on its side: the detector, trained on horizontal text, misses lines of it. Read the
     * page turned a quarter and keep the reading that got more. */
    struct ppocr_image turned = {img->height, img->width, malloc((size_t)img->width * img->height * 3), img->had_alpha};
    if (!turned.bgr)
        return 0;
    ocr_rotate90_ccw(img->bgr, img->width, img->height, turned.bgr);
    struct ppocr_result second;
    char why[256];
    int rc = run_one(e, &turned, &second, why, sizeof(why));
    ppocr_image_free(&turned);
    if (rc || lay_out(e, &second, why, sizeof(why)))
        return 0; /* the first reading stands */
    unturn_boxes(&second, img->width);
    second.width = img->width;
    second.height = img->height;
    for (int s = 0; s < PPOCR_STAGE_COUNT; s++) {
        second.wall_ms[s] += r->wall_ms[s];
        second.gpu_ms[s] += r->gpu_ms[s];
    }
    if (reading_weight(&second) > reading_weight(r)) {
        ppocr_result_free(r);
        *r = second;
    } else {
        for (int s = 0; s < PPOCR_STAGE_COUNT; s++) {
            r->wall_ms[s] = second.wall_ms[s];
            r->gpu_ms[s] = second.gpu_ms[s];
        }
        ppocr_result_free(&second);
    }
    return 0;
}

static bool image_usable(const struct ppocr_image *img)
{
    return img->width >= 1 && img->height >= 1 && img->bgr;
}

/* Whether img may share a run with other images: small, so that the device's slots stay small,
 * and not in --paddle-parity, whose batches are padded to their widest line. */
static bool shares_runs(const struct ppocr_engine *e, const struct ppocr_image *img)
{
    const struct prepare p = detection_prepare(e, img);
    const double w = img->width * p.scale + 2.0 * p.margin, h = img->height * p.scale + 2.0 * p.margin;
    return !e->opt.paddle_parity && w * h <= SHARED_RUN_MAX_PIXELS;
}

/* OCR of images[0..n): each alone, or small ones up to OCR_IMAGE_SLOTS a run. status[i] 0 or -1,
 * with its reason at errs + i * err_len. Returns the count that failed. */
static int engine_run_many(struct ppocr_engine *e, const struct ppocr_image *images, int n,
                           struct ppocr_result *results, int *status, char *errs, size_t err_len)
{
    int failed = 0;
    for (int i = 0; i < n;) {
        struct page pages[OCR_IMAGE_SLOTS];
        int at[OCR_IMAGE_SLOTS], np = 0;
        for (; i < n && np < OCR_IMAGE_SLOTS; i++) {
            memset(&results[i], 0, sizeof(results[i]));
            results[i].width = images[i].width;
            results[i].height = images[i].height;
            if (!image_usable(&images[i])) {
                status[i] = ocr_fail(errs + (size_t)i * err_len, err_len, "%s", "empty image");
                continue;
            }
            const bool shares = shares_runs(e, &images[i]);
            if (np && !shares)
                break; /* it runs alone, next */
            pages[np] = (struct page){
                .img = &images[i], .r = &results[i], .err = errs + (size_t)i * err_len, .err_len = err_len};
            at[np++] = i;
            if (!shares) {
                i++;
                break;
            }
        }
        if (np)
            run_pages(e, pages, np);
        for (int k = 0; k < np; k++) {
            const int j = at[k];
            status[j] = pages[k].rc ? -1 : page_finish(e, &images[j], &results[j], pages[k].err, err_len);
        }
    }
    for (int i = 0; i < n; i++)
        failed += status[i] != 0;
    return failed;
}

static int engine_run(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r, char *err,
                      size_t err_len)
{
    int status;
    return engine_run_many(e, img, 1, r, &status, err, err_len) ? -1 : 0;
}

enum ppocr_status ppocr_engine_run(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r,
                                   char *err, size_t err_len)
{
    return engine_run(e, img, r, err, err_len) ? PPOCR_ERR_FAILED : PPOCR_OK;
}

enum ppocr_status ppocr_engine_run_many(struct ppocr_engine *e, const struct ppocr_image *images, int n,
                                        struct ppocr_result *results, enum ppocr_status *status, char *errs,
                                        size_t err_len)
{
    if (n < 0)
        return PPOCR_ERR_FAILED;
    int own[OCR_IMAGE_SLOTS], *st = n <= OCR_IMAGE_SLOTS ? own : malloc((size_t)n * sizeof(*st));
    if (!st) {
        for (int i = 0; i < n; i++) {
            memset(&results[i], 0, sizeof(results[i]));
            status[i] = PPOCR_ERR_FAILED;
            snprintf(errs + (size_t)i * err_len, err_len, "out of memory");
        }
        return PPOCR_ERR_FAILED;
    }
    const int failed = engine_run_many(e, images, n, results, st, errs, err_len);
    for (int i = 0; i < n; i++)
        status[i] = st[i] ? PPOCR_ERR_FAILED : PPOCR_OK;
    if (st != own)
        free(st);
    return failed ? PPOCR_ERR_FAILED : PPOCR_OK;
}

void ppocr_engine_run_options(const struct ppocr_engine *e, struct ppocr_run_options *out)
{
    *out = (struct ppocr_run_options){.det_limit_side_len = e->opt.det_limit_side_len,
                                      .det_db_box_thresh = e->opt.det_db_box_thresh,
                                      .det_db_unclip_ratio = e->opt.det_db_unclip_ratio,
                                      .use_cls = e->opt.use_cls,
                                      .cls_thresh = e->opt.cls_thresh,
                                      .drop_score = e->opt.drop_score};
}

static int check_run_options(const struct ppocr_engine *e, const struct ppocr_run_options *o, char *err, size_t err_len)
{
    if (o->det_limit_side_len < 32 || o->det_limit_side_len > 8192) {
        snprintf(err, err_len, "det_limit_side_len %d is not within 32 to 8192", o->det_limit_side_len);
        return -1;
    }
    const struct {
        const char *name;
        double value, max;
    } ranges[] = {{"det_db_box_thresh", o->det_db_box_thresh, 1},
                  {"det_db_unclip_ratio", o->det_db_unclip_ratio, 100},
                  {"cls_thresh", o->cls_thresh, 1},
                  {"drop_score", o->drop_score, 1}};
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (!(ranges[i].value >= 0 && ranges[i].value <= ranges[i].max)) { /* NaN too */
            snprintf(err, err_len, "%s %g is not within 0 to %g", ranges[i].name, ranges[i].value, ranges[i].max);
            return -1;
        }
    if (o->use_cls && !e->opt.use_cls)
        return ocr_fail(err, err_len, "%s", "use_cls: this engine was made without the direction classifier");
    return 0;
}

enum ppocr_status ppocr_engine_run_with(struct ppocr_engine *e, const struct ppocr_image *img,
                                        const struct ppocr_run_options *o, struct ppocr_result *r, char *err,
                                        size_t err_len)
{
    if (check_run_options(e, o, err, err_len)) {
        memset(r, 0, sizeof(*r));
        return PPOCR_ERR_FAILED;
    }
    const struct ppocr_options own = e->opt;
    e->opt.det_limit_side_len = o->det_limit_side_len;
    e->opt.det_db_box_thresh = o->det_db_box_thresh;
    e->opt.det_db_unclip_ratio = o->det_db_unclip_ratio;
    e->opt.use_cls = !!o->use_cls;
    e->opt.cls_thresh = o->cls_thresh;
    e->opt.drop_score = o->drop_score;
    const int rc = engine_run(e, img, r, err, err_len);
    e->opt = own;
    return rc ? PPOCR_ERR_FAILED : PPOCR_OK;
}

void ppocr_result_free(struct ppocr_result *r)
{
    for (int i = 0; i < r->n_lines; i++) {
        for (int w = 0; w < r->lines[i].n_words; w++)
            free(r->lines[i].words[w].text);
        free(r->lines[i].words);
        free(r->lines[i].text);
    }
    free(r->lines);
    free(r->paragraphs);
    free(r->blocks);
    r->lines = NULL;
    r->paragraphs = r->blocks = NULL;
    r->n_lines = r->n_paragraphs = r->n_blocks = 0;
}
