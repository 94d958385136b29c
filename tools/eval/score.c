/* Ground-truth scoring and golden comparison; see score.h for the rules. */
#include "score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void eval_gt_opts_default(eval_gt_opts *o)
{
    o->remove_spaces = 0;
    o->line_cer = 0.10;
    o->pair_cer = 0.5;
}

void eval_golden_opts_default(eval_golden_opts *o)
{
    o->min_text_ratio = 0.98;
    o->max_cer = 0.01;
    o->box_px = 3.0;
    o->score_tol = 0.02;
    o->min_iou = 0.5;
}

void eval_gt_totals_add(eval_gt_totals *acc, const eval_gt_totals *t)
{
    acc->gt_chars += t->gt_chars;
    acc->edits += t->edits;
    acc->gt_lines += t->gt_lines;
    acc->recalled += t->recalled;
}

double eval_cer(const eval_gt_totals *t)
{
    return t->gt_chars ? (double)t->edits / (double)t->gt_chars : 0.0;
}

/* ------------------------------------------------------------------------ ground truth */

typedef struct {
    uint32_t *cp;
    size_t n;
} cpstr;

/* An output line normalised both ways: which one is used depends on the GT line it meets. */
typedef struct {
    cpstr spaced, unspaced;
} out_norm;

typedef struct {
    size_t i, j;      /* GT index, output index */
    double cer, dist; /* pairing cost, relative-position distance (tie-break) */
} pair_cand;

static int cmp_cand(const void *pa, const void *pb)
{
    const pair_cand *a = pa, *b = pb;
    if (a->cer != b->cer)
        return a->cer < b->cer ? -1 : 1;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

static double rel_pos(size_t k, size_t n)
{
    return n > 1 ? (double)k / (double)(n - 1) : 0.0;
}

/* The normalised concatenation of the outputs assigned to one GT line (`assigned`, ascending
 * output indices, count n), plus `extra` (SIZE_MAX for none) in its place. Pieces of a line
 * compared with spaces are joined by one space, as the split they come from. */
static size_t join_assigned(const out_norm *outs, const size_t *assigned, size_t n, size_t extra, int unspaced,
                            uint32_t *buf)
{
    size_t k = 0, pieces = 0, a = 0;
    int extra_done = extra == SIZE_MAX;
    for (;;) {
        size_t j;
        if (!extra_done && (a >= n || extra < assigned[a])) {
            j = extra;
            extra_done = 1;
        } else if (a < n)
            j = assigned[a++];
        else
            break;
        const cpstr *s = unspaced ? &outs[j].unspaced : &outs[j].spaced;
        if (!s->n)
            continue;
        if (pieces++ && !unspaced)
            buf[k++] = ' ';
        memcpy(buf + k, s->cp, s->n * sizeof *buf);
        k += s->n;
    }
    return k;
}

static int score_fields(const char *const *gt, size_t n_gt, const int *group_of, int fold_case, const char *const *out,
                        size_t n_out, const eval_gt_opts *opt, eval_gt_result *res)
{
    memset(res, 0, sizeof *res);
    int rc = -1;
    cpstr *g = calloc(n_gt ? n_gt : 1, sizeof *g);
    int *g_unspaced = calloc(n_gt ? n_gt : 1, sizeof *g_unspaced);
    out_norm *o = calloc(n_out ? n_out : 1, sizeof *o);
    size_t n_pairs = n_gt * n_out > 0 ? n_gt * n_out : 1;
    size_t *ed = calloc(n_pairs, sizeof *ed);
    pair_cand *cand = calloc(n_pairs, sizeof *cand);
    size_t *partner_of_out = malloc((n_out ? n_out : 1) * sizeof *partner_of_out); /* GT index or SIZE_MAX */
    size_t **assigned = calloc(n_gt ? n_gt : 1, sizeof *assigned);                 /* per GT: output indices */
    size_t *n_assigned = calloc(n_gt ? n_gt : 1, sizeof *n_assigned);
    size_t *cur_ed = calloc(n_gt ? n_gt : 1, sizeof *cur_ed);
    uint32_t *buf = NULL;
    res->lines = calloc(n_gt ? n_gt : 1, sizeof *res->lines);
    res->n_gt = n_gt;
    if (!g || !g_unspaced || !o || !ed || !cand || !partner_of_out || !assigned || !n_assigned || !cur_ed ||
        !res->lines)
        goto done;

    size_t total_out_cp = 0;
    for (size_t i = 0; i < n_gt; i++) {
        uint32_t *raw;
        size_t n = text_utf8_decode(gt[i], strlen(gt[i]), &raw);
        if (n == (size_t)-1)
            goto done;
        g_unspaced[i] = opt->remove_spaces || text_has_cjk(raw, n);
        free(raw);
        text_norm tn = {g_unspaced[i], fold_case};
        g[i].n = text_normalized_utf8(gt[i], &tn, &g[i].cp);
        if (g[i].n == (size_t)-1) {
            g[i].n = 0;
            goto done;
        }
    }
    for (size_t j = 0; j < n_out; j++) {
        text_norm spaced = {0, fold_case}, unspaced = {1, fold_case};
        o[j].spaced.n = text_normalized_utf8(out[j], &spaced, &o[j].spaced.cp);
        o[j].unspaced.n = text_normalized_utf8(out[j], &unspaced, &o[j].unspaced.cp);
        if (o[j].spaced.n == (size_t)-1 || o[j].unspaced.n == (size_t)-1) {
            o[j].spaced.n = o[j].unspaced.n = 0;
            goto done;
        }
        total_out_cp += o[j].spaced.n + 1;
        partner_of_out[j] = SIZE_MAX;
    }
    buf = malloc((total_out_cp + 1) * sizeof *buf);
    if (!buf)
        goto done;

    /* 1. one-to-one pairs, best first */
    size_t n_cand = 0;
    for (size_t i = 0; i < n_gt; i++) {
        for (size_t j = 0; j < n_out; j++) {
            const cpstr *s = g_unspaced[i] ? &o[j].unspaced : &o[j].spaced;
            size_t d = text_levenshtein(g[i].cp, g[i].n, s->cp, s->n);
            ed[i * n_out + j] = d;
            double cer = (double)d / (double)(g[i].n ? g[i].n : 1);
            if (cer <= opt->pair_cer && !(g[i].n == 0 && s->n == 0))
                cand[n_cand++] = (pair_cand){i, j, cer, fabs(rel_pos(i, n_gt) - rel_pos(j, n_out))};
        }
        cur_ed[i] = g[i].n; /* nothing assigned yet: every GT character is a deletion */
    }
    qsort(cand, n_cand, sizeof *cand, cmp_cand);
    for (size_t c = 0; c < n_cand; c++) {
        size_t i = cand[c].i, j = cand[c].j;
        if (n_assigned[i] || partner_of_out[j] != SIZE_MAX)
            continue;
        assigned[i] = malloc(n_out * sizeof **assigned);
        if (!assigned[i])
            goto done;
        assigned[i][n_assigned[i]++] = j;
        partner_of_out[j] = i;
        cur_ed[i] = ed[i * n_out + j];
    }

    /* 2. leftovers join the GT line they fit best (split lines, noise) */
    for (size_t j = 0; j < n_out && n_gt; j++) {
        if (partner_of_out[j] != SIZE_MAX)
            continue;
        size_t best_i = 0;
        double best_delta = INFINITY, best_dist = INFINITY;
        size_t best_ed = 0;
        for (size_t i = 0; i < n_gt; i++) {
            size_t len = join_assigned(o, assigned[i], n_assigned[i], j, g_unspaced[i], buf);
            size_t d = text_levenshtein(g[i].cp, g[i].n, buf, len);
            double delta = (double)d - (double)cur_ed[i];
            double dist = fabs(rel_pos(i, n_gt) - rel_pos(j, n_out));
            if (delta < best_delta || (delta == best_delta && dist < best_dist)) {
                best_delta = delta;
                best_dist = dist;
                best_i = i;
                best_ed = d;
            }
        }
        /* Appending it helps no GT line: it is noise, counted as insertions of the page but kept
     * off every GT line so that it does not cost a recalled line its recall. */
        const cpstr *own = g_unspaced[best_i] ? &o[j].unspaced : &o[j].spaced;
        if (best_delta >= (double)own->n) {
            res->noise_lines++;
            res->noise_chars += own->n;
            continue;
        }
        if (!assigned[best_i]) {
            assigned[best_i] = malloc(n_out * sizeof **assigned);
            if (!assigned[best_i])
                goto done;
        }
        /* keep the list in output order */
        size_t k = n_assigned[best_i]++;
        while (k > 0 && assigned[best_i][k - 1] > j) {
            assigned[best_i][k] = assigned[best_i][k - 1];
            k--;
        }
        assigned[best_i][k] = j;
        partner_of_out[j] = best_i;
        cur_ed[best_i] = best_ed;
    }

    /* results */
    for (size_t i = 0; i < n_gt; i++) {
        eval_gt_line *l = &res->lines[i];
        size_t bytes = 1;
        for (size_t a = 0; a < n_assigned[i]; a++)
            bytes += strlen(out[assigned[i][a]]) + 1;
        l->matched = malloc(bytes);
        if (!l->matched)
            goto done;
        l->matched[0] = 0;
        for (size_t a = 0; a < n_assigned[i]; a++) {
            if (a)
                strcat(l->matched, " ");
            strcat(l->matched, out[assigned[i][a]]);
        }
        l->gt_chars = g[i].n;
        l->edits = cur_ed[i];
        l->recalled = (double)l->edits <= opt->line_cer * (double)l->gt_chars;
        l->group = group_of ? (group_of[i] ? 1 : 0) : 0;
        eval_gt_totals *t = &res->group[l->group];
        t->gt_chars += l->gt_chars;
        t->edits += l->edits;
        t->gt_lines++;
        t->recalled += (size_t)l->recalled;
    }
    res->group[0].edits += res->noise_chars;
    rc = 0;

done:
    if (g)
        for (size_t i = 0; i < n_gt; i++)
            free(g[i].cp);
    if (o)
        for (size_t j = 0; j < n_out; j++) {
            free(o[j].spaced.cp);
            free(o[j].unspaced.cp);
        }
    if (assigned)
        for (size_t i = 0; i < n_gt; i++)
            free(assigned[i]);
    free(g);
    free(g_unspaced);
    free(o);
    free(ed);
    free(cand);
    free(partner_of_out);
    free(assigned);
    free(n_assigned);
    free(cur_ed);
    free(buf);
    if (rc)
        eval_gt_result_free(res);
    return rc;
}

void eval_gt_result_free(eval_gt_result *res)
{
    if (res->lines)
        for (size_t i = 0; i < res->n_gt; i++)
            free(res->lines[i].matched);
    free(res->lines);
    memset(res, 0, sizeof *res);
}

/* ------------------------------------------------------------------------ goldens */

static void bounds(const double q[4][2], double *x0, double *y0, double *x1, double *y1)
{
    *x0 = *x1 = q[0][0];
    *y0 = *y1 = q[0][1];
    for (int k = 1; k < 4; k++) {
        if (q[k][0] < *x0)
            *x0 = q[k][0];
        if (q[k][0] > *x1)
            *x1 = q[k][0];
        if (q[k][1] < *y0)
            *y0 = q[k][1];
        if (q[k][1] > *y1)
            *y1 = q[k][1];
    }
}

double eval_box_iou(const double a[4][2], const double b[4][2])
{
    double ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
    bounds(a, &ax0, &ay0, &ax1, &ay1);
    bounds(b, &bx0, &by0, &bx1, &by1);
    double iw = fmin(ax1, bx1) - fmax(ax0, bx0), ih = fmin(ay1, by1) - fmax(ay0, by0);
    if (iw <= 0 || ih <= 0)
        return 0.0;
    double inter = iw * ih;
    double uni = (ax1 - ax0) * (ay1 - ay0) + (bx1 - bx0) * (by1 - by0) - inter;
    return uni > 0 ? inter / uni : 0.0;
}

static size_t cp_count(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static size_t raw_distance(const char *a, const char *b)
{
    uint32_t *ca, *cb;
    size_t na = text_utf8_decode(a, strlen(a), &ca);
    size_t nb = text_utf8_decode(b, strlen(b), &cb);
    if (na == (size_t)-1 || nb == (size_t)-1)
        abort();
    size_t d = text_levenshtein(ca, na, cb, nb);
    free(ca);
    free(cb);
    return d;
}

static void print_line(FILE *f, const char *who, size_t idx, const eval_line *l)
{
    fprintf(f, "%s #%zu \"%s\" score %.4f box [[%g,%g],[%g,%g],[%g,%g],[%g,%g]]", who, idx + 1, l->text, l->score,
            l->box[0][0], l->box[0][1], l->box[1][0], l->box[1][1], l->box[2][0], l->box[2][1], l->box[3][0],
            l->box[3][1]);
}

typedef struct {
    size_t i, j;
    double iou, dist;
} box_cand;

static int cmp_box_cand(const void *pa, const void *pb)
{
    const box_cand *a = pa, *b = pb;
    if (a->iou != b->iou)
        return a->iou > b->iou ? -1 : 1;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

size_t eval_golden_compare_page(const eval_page *golden, const eval_page *ours, const eval_golden_opts *opt,
                                eval_golden_totals *acc, FILE *report)
{
    size_t problems = 0;
    size_t ng = golden->n_lines;
    acc->pages++;
    acc->golden_lines += ng;
    if (!ours) {
        acc->missing_pages++;
        for (size_t i = 0; i < ng; i++) {
            size_t n = cp_count(golden->lines[i].text);
            acc->golden_chars += n;
            acc->edits += n;
        }
        if (report)
            fprintf(report, "%s: missing from the results (%zu golden lines)\n", golden->file, ng);
        return 1;
    }
    size_t no = ours->n_lines;
    acc->our_lines += no;
    if (ng != no) {
        acc->count_mismatch_pages++;
        problems++;
        if (report)
            fprintf(report, "%s: %zu lines, golden has %zu\n", golden->file, no, ng);
    }

    /* pair by box overlap, best first */
    box_cand *cand = malloc((ng * no > 0 ? ng * no : 1) * sizeof *cand);
    size_t *pair_of_g = malloc((ng ? ng : 1) * sizeof *pair_of_g);
    unsigned char *used_o = calloc(no ? no : 1, 1);
    if (!cand || !pair_of_g || !used_o)
        abort();
    size_t nc = 0;
    for (size_t i = 0; i < ng; i++) {
        pair_of_g[i] = SIZE_MAX;
        for (size_t j = 0; j < no; j++) {
            double iou = eval_box_iou(golden->lines[i].box, ours->lines[j].box);
            if (iou >= opt->min_iou)
                cand[nc++] = (box_cand){i, j, iou, fabs((double)i - (double)j)};
        }
    }
    qsort(cand, nc, sizeof *cand, cmp_box_cand);
    for (size_t c = 0; c < nc; c++) {
        if (pair_of_g[cand[c].i] != SIZE_MAX || used_o[cand[c].j])
            continue;
        pair_of_g[cand[c].i] = cand[c].j;
        used_o[cand[c].j] = 1;
    }

    for (size_t i = 0; i < ng; i++) {
        const eval_line *gl = &golden->lines[i];
        size_t gchars = cp_count(gl->text);
        acc->golden_chars += gchars;
        size_t j = pair_of_g[i];
        if (j == SIZE_MAX) {
            acc->edits += gchars;
            problems++;
            if (report) {
                fprintf(report, "%s: ", golden->file);
                print_line(report, "golden", i, gl);
                fprintf(report, " | ours: no line overlaps it (IoU >= %.2f)\n", opt->min_iou);
            }
            continue;
        }
        const eval_line *ol = &ours->lines[j];
        acc->paired++;
        int text_ok = strcmp(gl->text, ol->text) == 0;
        if (text_ok)
            acc->text_equal++;
        else
            acc->edits += raw_distance(gl->text, ol->text);
        double corner = 0.0;
        for (int k = 0; k < 4; k++)
            for (int c = 0; c < 2; c++)
                corner = fmax(corner, fabs(gl->box[k][c] - ol->box[k][c]));
        double sdiff = fabs(gl->score - ol->score);
        if (corner > acc->max_corner_px)
            acc->max_corner_px = corner;
        if (sdiff > acc->max_score_diff)
            acc->max_score_diff = sdiff;
        int box_ok = corner <= opt->box_px, score_ok = sdiff <= opt->score_tol;
        acc->box_fail += !box_ok;
        acc->score_fail += !score_ok;
        if (text_ok && box_ok && score_ok)
            continue;
        problems++;
        if (report) {
            fprintf(report, "%s: ", golden->file);
            print_line(report, "golden", i, gl);
            fprintf(report, " | ");
            print_line(report, "ours", j, ol);
            fprintf(report, " |%s", text_ok ? "" : " text differs;");
            if (!box_ok)
                fprintf(report, " box off by %.1f px;", corner);
            if (!score_ok)
                fprintf(report, " score off by %.4f;", sdiff);
            fputc('\n', report);
        }
    }
    for (size_t j = 0; j < no; j++) {
        if (used_o[j])
            continue;
        acc->edits += cp_count(ours->lines[j].text);
        problems++;
        if (report) {
            fprintf(report, "%s: golden: no line overlaps it | ", golden->file);
            print_line(report, "ours", j, &ours->lines[j]);
            fputc('\n', report);
        }
    }
    free(cand);
    free(pair_of_g);
    free(used_o);
    return problems;
}

int eval_golden_pass(const eval_golden_totals *t, const eval_golden_opts *opt)
{
    if (t->missing_pages || t->count_mismatch_pages || t->box_fail || t->score_fail)
        return 0;
    if (t->golden_lines && (double)t->text_equal < opt->min_text_ratio * (double)t->golden_lines)
        return 0;
    if (t->golden_chars && (double)t->edits > opt->max_cer * (double)t->golden_chars)
        return 0;
    if (!t->golden_chars && t->edits)
        return 0;
    return 1;
}

int eval_split_fields(const char *const *out, size_t n_out, char ***fields, size_t *n_fields)
{
    size_t n = 0;
    for (size_t i = 0; i < n_out; i++) {
        n++;
        for (const char *c = out[i]; *c; c++)
            n += *c == '\t';
    }
    char **f = calloc(n ? n : 1, sizeof *f);
    if (!f)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < n_out; i++) {
        const char *s = out[i];
        for (;;) {
            const char *tab = strchr(s, '\t');
            size_t len = tab ? (size_t)(tab - s) : strlen(s);
            f[k] = malloc(len + 1);
            if (!f[k]) {
                eval_fields_free(f, k);
                return -1;
            }
            memcpy(f[k], s, len);
            f[k++][len] = 0;
            if (!tab)
                break;
            s = tab + 1;
        }
    }
    *fields = f;
    *n_fields = k;
    return 0;
}

void eval_fields_free(char **fields, size_t n_fields)
{
    for (size_t i = 0; i < n_fields; i++)
        free(fields[i]);
    free(fields);
}

int eval_score_gt(const char *const *gt, size_t n_gt, const int *group_of, int fold_case, const char *const *out,
                  size_t n_out, const eval_gt_opts *opt, eval_gt_result *res)
{
    char **fields;
    size_t n_fields;
    memset(res, 0, sizeof *res);
    if (eval_split_fields(out, n_out, &fields, &n_fields))
        return -1;
    int rc = score_fields(gt, n_gt, group_of, fold_case, (const char *const *)fields, n_fields, opt, res);
    eval_fields_free(fields, n_fields);
    return rc;
}
