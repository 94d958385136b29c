/* The pipeline variants a run used, in a text file beside the pipeline cache, and the next run's
 * threads that build them again ahead: most variants are chosen by an op's shapes and built on
 * first use, inside the first image's run, where each costs a cache lookup in the driver on the
 * image's own thread. Built ahead, they are looked up in the table instead.
 *
 * The file is "ppocr-vk pipeline variants 2", then a line per variant: its age (the runs since
 * one last used it: a short run such as a self-check, or one with other options, leaves the
 * others listed for a while), the shader's name and the checksum of its SPIR-V, buffers,
 * push-constant bytes, subgroup size, texel mask (hex), the count of specialization constants and
 * their values (hex). The oldest come first and the variants of the last run last, in the order
 * it first asked for them. A line for a shader this program does not have, or has with other
 * SPIR-V, is passed over; a file that does not parse is ignored. */
#include "gpu/internal.h"
#include "gpu/shaders.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VARIANTS_MAGIC "ppocr-vk pipeline variants 2"
#define VARIANTS_MAX 4096
#define AGE_MAX 8 /* runs a variant stays listed without being used */

void gpu_pipeline_variants_path(const char *cache_path, char *out, size_t out_size)
{
    out[0] = 0;
    size_t n = strlen(cache_path);
    if (n > 4 && strcmp(cache_path + n - 4, ".bin") == 0 && n - 4 + sizeof ".variants" <= out_size)
        snprintf(out, out_size, "%.*s.variants", (int)(n - 4), cache_path);
}

static uint64_t shader_checksum(enum gpu_shader_id id)
{
    const struct gpu_shader_blob *b = gpu_shader_get(id);
    return b ? b->checksum : 0;
}

static int shader_by_name(const char *name)
{
    for (int id = 0; id < GPU_SHADER_COUNT; id++) {
        const struct gpu_shader_blob *b = gpu_shader_get((enum gpu_shader_id)id);
        if (b && strcmp(b->name, name) == 0)
            return id;
    }
    return -1;
}

static void list_free(struct gpu_pipeline_desc_list *l)
{
    free(l->descs);
    free(l->specs);
    free(l->ages);
    memset(l, 0, sizeof *l);
}

/* One line into d (its spec into spec); 1: a variant of this program, 0: one to pass over, -1:
 * not a line of ours. */
static int parse_line(char *line, struct gpu_pipeline_desc *d, uint32_t *spec, unsigned char *age)
{
    char name[64];
    uint64_t sum;
    unsigned runs, buffers, push, subgroup, texel, n;
    int used;
    if (sscanf(line, "%u %63s %" SCNx64 " %u %u %u %x %u%n", &runs, name, &sum, &buffers, &push, &subgroup, &texel, &n,
               &used) != 8 ||
        runs > AGE_MAX || n > GPU_MAX_SPEC_CONSTANTS || buffers > GPU_MAX_BUFFERS)
        return -1;
    *age = (unsigned char)runs;
    char *p = line + used;
    for (unsigned i = 0; i < n; i++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 16);
        if (end == p || errno || v > UINT32_MAX)
            return -1;
        spec[i] = (uint32_t)v;
        p = end;
    }
    while (*p == ' ' || *p == '\n')
        p++;
    if (*p)
        return -1;
    const int id = shader_by_name(name);
    if (id < 0 || shader_checksum((enum gpu_shader_id)id) != sum)
        return 0;
    *d = (struct gpu_pipeline_desc){.shader = (enum gpu_shader_id)id,
                                    .spec_count = n,
                                    .buffer_count = buffers,
                                    .push_bytes = push,
                                    .subgroup_size = subgroup,
                                    .texel_mask = texel};
    return 1;
}

static void read_list(const char *path, struct gpu_pipeline_desc_list *l)
{
    memset(l, 0, sizeof *l);
    FILE *f = path[0] ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    bool ok = fgets(line, sizeof line, f) && strcmp(line, VARIANTS_MAGIC "\n") == 0;
    unsigned cap = 0;
    while (ok && fgets(line, sizeof line, f)) {
        if (l->count == VARIANTS_MAX || !strchr(line, '\n')) {
            ok = false;
            break;
        }
        if (l->count == cap) {
            cap = cap ? 2 * cap : 64;
            struct gpu_pipeline_desc *descs = realloc(l->descs, cap * sizeof *descs);
            if (descs)
                l->descs = descs;
            uint32_t *specs = descs ? realloc(l->specs, (size_t)cap * GPU_MAX_SPEC_CONSTANTS * sizeof *specs) : NULL;
            if (specs)
                l->specs = specs;
            unsigned char *ages = specs ? realloc(l->ages, cap) : NULL;
            if (ages)
                l->ages = ages;
            if (!descs || !specs || !ages) {
                ok = false;
                break;
            }
        }
        const int got = parse_line(line, &l->descs[l->count], l->specs + (size_t)l->count * GPU_MAX_SPEC_CONSTANTS,
                                   &l->ages[l->count]);
        if (got < 0)
            ok = false;
        l->count += got > 0;
    }
    fclose(f);
    if (!ok) {
        list_free(l);
        return;
    }
    for (unsigned i = 0; i < l->count; i++) /* the specs moved with each realloc */
        l->descs[i].spec = l->specs + (size_t)i * GPU_MAX_SPEC_CONSTANTS;
}

/* Built last first: the last run's variants built on first use came last, while the nets being
 * made ask for the first ones themselves; the older ones after them. */
static void *prebuild_main(void *arg)
{
    struct gpu_prebuild *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        const bool done = b->stop || b->next >= b->list.count;
        const unsigned i = done ? 0 : b->list.count - 1 - b->next++;
        pthread_mutex_unlock(&b->lock);
        if (done)
            return NULL;
        const struct gpu_pipeline *p;
        (void)gpu_pipeline_table_find_or_build(b->table, &b->list.descs[i], false, &p); /* its user says why */
    }
}

void gpu_prebuild_start(struct gpu_prebuild *b, struct gpu_pipeline_table *t, const char *path, unsigned n_threads)
{
    memset(b, 0, sizeof *b);
    b->table = t;
    pthread_mutex_init(&b->lock, NULL);
    read_list(path, &b->list);
    if (n_threads > sizeof b->threads / sizeof *b->threads)
        n_threads = sizeof b->threads / sizeof *b->threads;
    for (unsigned k = 0; k < n_threads && b->list.count; k++)
        if (pthread_create(&b->threads[b->n_threads], NULL, prebuild_main, b) == 0)
            b->n_threads++;
}

void gpu_prebuild_finish(struct gpu_prebuild *b, bool stop)
{
    if (!b->table)
        return;
    pthread_mutex_lock(&b->lock);
    b->stop |= stop;
    pthread_mutex_unlock(&b->lock);
    for (unsigned k = 0; k < b->n_threads; k++)
        pthread_join(b->threads[k], NULL);
    b->n_threads = 0;
}

/* Where p is in the list read, or -1. */
static int listed_at(const struct gpu_pipeline_desc_list *l, const struct gpu_pipeline *p)
{
    for (unsigned i = 0; i < l->count; i++)
        if (gpu_pipeline_is_variant(p, &l->descs[i]))
            return (int)i;
    return -1;
}

static bool write_line(FILE *f, unsigned age, enum gpu_shader_id shader, unsigned buffers, unsigned push,
                       unsigned subgroup, unsigned texel, const uint32_t *spec, unsigned n)
{
    bool ok = fprintf(f, "%u %s %016" PRIx64 " %u %u %u %x %u", age, gpu_shader_name(shader), shader_checksum(shader),
                      buffers, push, subgroup, texel, n) > 0;
    for (unsigned k = 0; ok && k < n; k++)
        ok = fprintf(f, " %x", spec[k]) > 0;
    return ok && fputc('\n', f) != EOF;
}

void gpu_pipeline_variants_save(struct gpu_pipeline_table *t, const struct gpu_prebuild *b, const char *path)
{
    char tmp[1100];
    const struct gpu_pipeline_desc_list *l = &b->list;
    bool *kept_used = l->count ? calloc(l->count, sizeof *kept_used) : NULL;
    if (!path[0] || (l->count && !kept_used) ||
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp) {
        free(kept_used);
        return;
    }
    pthread_mutex_lock(&t->lock);
    /* unchanged where every variant used was listed at age 0 and every one listed was used */
    bool changed = false;
    unsigned used = 0;
    for (unsigned i = 0; i < t->count; i++)
        if (t->list[i]->ready && t->list[i]->used) {
            const int at = listed_at(l, t->list[i]);
            changed |= at < 0 || l->ages[at] != 0;
            if (at >= 0)
                kept_used[at] = true;
            used++;
        }
    for (unsigned i = 0; i < l->count; i++)
        changed |= !kept_used[i];
    FILE *f = changed && used ? fopen(tmp, "w") : NULL;
    bool ok = f && fprintf(f, "%s\n", VARIANTS_MAGIC) > 0;
    for (unsigned age = AGE_MAX; ok && age >= 1; age--) /* the oldest first */
        for (unsigned i = 0; ok && i < l->count; i++)
            if (!kept_used[i] && l->ages[i] + 1u == age) {
                const struct gpu_pipeline_desc *d = &l->descs[i];
                ok = write_line(f, age, d->shader, d->buffer_count, d->push_bytes, d->subgroup_size, d->texel_mask,
                                d->spec, d->spec_count);
            }
    for (unsigned i = 0; ok && i < t->count; i++) {
        const struct gpu_pipeline *p = t->list[i];
        if (p->ready && p->used)
            ok = write_line(f, 0, p->shader_id, p->buffer_count, p->push_bytes, p->subgroup_size, p->texel_mask,
                            p->spec, p->spec_count);
    }
    pthread_mutex_unlock(&t->lock);
    free(kept_used);
    if (!f)
        return;
    /* the pipeline cache's folder exists by now; rename() is atomic, as for the cache itself */
    if (fclose(f) != 0 || !ok || rename(tmp, path) != 0)
        remove(tmp);
}

void gpu_prebuild_release(struct gpu_prebuild *b)
{
    if (!b->table)
        return;
    gpu_prebuild_finish(b, true);
    list_free(&b->list);
    pthread_mutex_destroy(&b->lock);
    b->table = NULL;
}
