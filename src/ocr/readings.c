/* The lines' readings. Lines whose direction is a guess get a second reading turned 180 degrees:
 * tall boxes (turned 90 degrees one way, though the text may run the other way) and lines the
 * classifier turned over (it does so to some upright Latin lines with high confidence). The
 * recogniser's own score then decides. */
#include "ocr/engine_internal.h"

/* The readings go after the n lines, each pointing back with `twin`; returns the count of lines
 * and readings. */
static int add_turned_readings(struct line *lines, int n)
{
    int total = n;
    for (int i = 0; i < n; i++) {
        if (!lines[i].crop.rotate && !lines[i].crop.flip)
            continue;
        lines[total] = lines[i];
        lines[total].crop.flip = !lines[i].crop.flip;
        lines[total].twin = i;
        total++;
    }
    return total;
}

static void keep_better_readings(struct line *lines, int n, int total)
{
    for (int i = n; i < total; i++) {
        struct line *first = &lines[lines[i].twin], *second = &lines[i];
        if (second->text.score > first->text.score) {
            struct ctc_text t = first->text;
            first->text = second->text;
            second->text = t;
            first->crop.flip = second->crop.flip;
        }
    }
}

/* The readings of add_turned_readings with the classifier run beside recognition instead of
 * before it (default mode): every line is read as it stands and tall ones turned over too, in
 * runs whose first also classifies the lines; a line the classifier turns over is then read
 * turned as well. The readings come out as add_turned_readings orders them (the first in the
 * classifier's direction, the twin the other way), so results are the same; the classifier's
 * barriers overlap recognition's instead of adding to them. Its time is counted in rec's. */
static int read_beside_cls(struct ppocr_engine *e, struct line *lines, int n_lines, int *n_readings,
                           struct ppocr_result *r, char *err, size_t err_len)
{
    bool turn[CLS_BATCH_MAX];
    struct line *cls_lines[CLS_BATCH_MAX];
    for (int i = 0; i < n_lines; i++)
        cls_lines[i] = &lines[i];
    struct cls_beside cls = {cls_lines, n_lines, turn};
    int total = add_turned_readings(lines, n_lines);
    *n_readings = total; /* the caller frees every reading's text, failed or not */
    if (ocr_recognize(e, lines, total, &cls, r, err, err_len))
        return -1;
    int twin_of[CLS_BATCH_MAX];
    for (int i = 0; i < n_lines; i++)
        twin_of[i] = -1;
    for (int t = n_lines; t < total; t++)
        twin_of[lines[t].twin] = t;
    struct line again[CLS_BATCH_MAX];
    int from[CLS_BATCH_MAX], n_again = 0;
    for (int i = 0; i < n_lines; i++) {
        if (!turn[i])
            continue;
        if (twin_of[i] >= 0) { /* read both ways already: the turned reading becomes the first */
            struct line *t = &lines[twin_of[i]];
            struct ctc_text text = lines[i].text;
            lines[i].text = t->text;
            t->text = text;
            lines[i].crop.flip = 1;
            t->crop.flip = 0;
            continue;
        }
        lines[total] = lines[i]; /* the reading as it stands becomes the twin */
        lines[total].twin = i;
        total++;
        lines[i].crop.flip = 1;
        lines[i].text = (struct ctc_text){0};
        again[n_again] = lines[i];
        from[n_again++] = i;
    }
    *n_readings = total;
    if (n_again && ocr_recognize(e, again, n_again, NULL, r, err, err_len)) {
        for (int k = 0; k < n_again; k++)
            ctc_text_free(&again[k].text);
        return -1;
    }
    for (int k = 0; k < n_again; k++)
        lines[from[k]].text = again[k].text;
    return 0;
}

int ocr_read_lines(struct ppocr_engine *e, struct line *lines, int n_lines, int *n_readings, struct ppocr_result *r,
                   char *err, size_t err_len)
{
    int rc = 0;
    *n_readings = n_lines;
    if (n_lines && e->opt.use_cls && !e->opt.paddle_parity && n_lines <= CLS_BATCH_MAX) {
        rc = read_beside_cls(e, lines, n_lines, n_readings, r, err, err_len);
    } else {
        double t1 = ocr_now_ms();
        if (n_lines && e->opt.use_cls)
            rc = ocr_classify(e, lines, n_lines, r, err, err_len);
        r->wall_ms[PPOCR_STAGE_CLS] = ocr_now_ms() - t1;
        *n_readings = e->opt.paddle_parity ? n_lines : add_turned_readings(lines, n_lines);
        if (rc == 0 && n_lines)
            rc = ocr_recognize(e, lines, *n_readings, NULL, r, err, err_len);
    }
    if (rc == 0)
        keep_better_readings(lines, n_lines, *n_readings);
    return rc;
}
