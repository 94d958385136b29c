/* The page policy: how an image is prepared for the pipeline (scaled, framed by a margin), a page
 * on its side read a quarter turned too, the lines' words, and the page's reading order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/engine_internal.h"
#include "ocr/layout.h"
#include "ocr/preprocess.h"
#include "ocr/word_boxes.h"

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

/* OCR of src framed by `margin` pixels of its border colour: the image the pipeline sees. */
static int run_image(struct ppocr_engine *e, const struct ppocr_image *src, int margin, struct ppocr_result *r,
                     char *err, size_t err_len)
{
    const struct ppocr_image framed = {
        .width = src->width + 2 * margin, .height = src->height + 2 * margin, .had_alpha = src->had_alpha};
    const struct ppocr_image *img = &framed; /* its bytes are on the GPU only */
    r->width = img->width;
    r->height = img->height;
    if (ocr_upload(e, src, margin, r, err, err_len))
        return -1;

    struct db_boxes boxes = {0};
    if (ocr_detect(e, img, e->opt.det_limit_side_len, e->opt.det_db_unclip_ratio, &boxes, r, err, err_len))
        return -1;
    if (!e->opt.paddle_parity && ocr_detect_strips(e, src, margin, &boxes, r, err, err_len)) {
        db_boxes_free(&boxes);
        return -1;
    }

    /* Room for a second reading of every line (see add_turned_readings). */
    struct line *lines = calloc(2 * boxes.count + 1, sizeof(*lines));
    if (!lines) {
        db_boxes_free(&boxes);
        return ocr_fail(err, err_len, "%s", "out of memory");
    }
    int n_lines = 0;
    for (size_t b = 0; b < boxes.count; b++) {
        float pts[4][2];
        for (int k = 0; k < 4; k++) {
            pts[k][0] = (float)boxes.boxes[b].pts[k][0];
            pts[k][1] = (float)boxes.boxes[b].pts[k][1];
        }
        struct ocr_crop_plan plan;
        if (ocr_crop_plan_make(pts, &plan))
            continue; /* a degenerate box has nothing to read */
        struct line *l = &lines[n_lines++];
        memcpy(l->crop.src_from_dst, plan.src_from_dst, sizeof(plan.src_from_dst));
        l->crop.width = plan.width;
        l->crop.height = plan.height;
        l->crop.rotate = plan.rotate;
        l->box = (int)b;
    }

    int n_readings = n_lines, rc = ocr_read_lines(e, img, lines, n_lines, &n_readings, r, err, err_len);

    if (rc == 0) {
        r->lines = calloc((size_t)n_lines + 1, sizeof(*r->lines));
        if (!r->lines)
            rc = ocr_fail(err, err_len, "%s", "out of memory");
    }
    for (int i = n_lines; i < n_readings; i++)
        ctc_text_free(&lines[i].text);
    for (int i = 0; i < n_lines; i++) {
        struct line *l = &lines[i];
        if (rc == 0 && l->text.text && l->text.score >= e->opt.drop_score) {
            struct ppocr_line *o = &r->lines[r->n_lines++];
            o->text = l->text.text;
            o->score = l->text.score;
            o->upside_down = l->crop.flip;
            memcpy(o->box, boxes.boxes[l->box].pts, sizeof(o->box));
            if (line_words(l, o))
                rc = ocr_fail(err, err_len, "%s", "out of memory");
            l->text.text = NULL;
        }
        ctc_text_free(&l->text);
    }
    free(lines);
    db_boxes_free(&boxes);
    if (rc)
        ppocr_result_free(r);
    return rc;
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

static int run_prepared(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r, char *err,
                        size_t err_len)
{
    memset(r, 0, sizeof(*r));
    struct prepare p = detection_prepare(e, img);
    if (p.scale == 1.0 && p.margin == 0)
        return run_image(e, img, 0, r, err, err_len);

    struct ppocr_image scaled = *img;
    scaled.bgr = NULL;
    if (p.scale != 1.0) {
        scaled.width = (int)lround(img->width * p.scale);
        scaled.height = (int)lround(img->height * p.scale);
        scaled.bgr = malloc((size_t)scaled.width * scaled.height * 3);
        if (!scaled.bgr ||
            ocr_resize_linear(img->bgr, img->width, img->height, scaled.bgr, scaled.width, scaled.height, 3)) {
            free(scaled.bgr);
            return ocr_fail(err, err_len, "%s", "out of memory scaling the image");
        }
    }
    const struct ppocr_image *src = scaled.bgr ? &scaled : img;
    if (src->width > PPOCR_IMAGE_MAX_SIDE - 2 * p.margin || src->height > PPOCR_IMAGE_MAX_SIDE - 2 * p.margin) {
        free(scaled.bgr);
        return ocr_fail(err, err_len, "%s", "the image is too large for the margin detection adds");
    }
    double sx = (double)src->width / img->width, sy = (double)src->height / img->height;
    int rc = run_image(e, src, p.margin, r, err, err_len);
    free(scaled.bgr);
    /* Back to the caller's image: unscale, and clip what reaches into the margin. */
    for (int i = 0; rc == 0 && i < r->n_lines; i++)
        for (int k = 0; k < 4; k++) {
            unprepare_point(r->lines[i].box[k], p, sx, sy, img);
            for (int w = 0; w < r->lines[i].n_words; w++)
                unprepare_point(r->lines[i].words[w].box[k], p, sx, sy, img);
        }
    r->width = img->width;
    r->height = img->height;
    return rc;
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

/* OCR of an image: its lines, their words, and the page's structure. A page whose lines mostly
 * run up or down is read turned a quarter too, and the better reading kept. */
static int engine_run(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r, char *err,
                      size_t err_len)
{
    memset(r, 0, sizeof(*r));
    r->width = img->width;
    r->height = img->height;
    if (img->width < 1 || img->height < 1 || !img->bgr)
        return ocr_fail(err, err_len, "%s", "empty image");
    if (run_prepared(e, img, r, err, err_len))
        return -1;
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
    int rc = run_prepared(e, &turned, &second, why, sizeof(why));
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

enum ppocr_status ppocr_engine_run(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r,
                                   char *err, size_t err_len)
{
    return engine_run(e, img, r, err, err_len) ? PPOCR_ERR_FAILED : PPOCR_OK;
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

static int check_run_options(const struct ppocr_engine *e, const struct ppocr_run_options *o, char *err,
                             size_t err_len)
{
    if (o->det_limit_side_len < 32 || o->det_limit_side_len > 8192)
    {
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
