/* The VkPipelineCache kept on disk. The file is ours: a header naming the device, driver and
 * program it belongs to, plus a checksum, in front of the driver's data. Anything that does not
 * match exactly is ignored (drivers are not all robust against foreign or damaged data). */
#include "gpu/internal.h"
#include "gpu/pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PPOCR_VERSION
#define PPOCR_VERSION "dev"
#endif

#define CACHE_MAGIC "PPVKPC02"

struct cache_header {
    char magic[8];
    uint8_t device_uuid[VK_UUID_SIZE];
    uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
    uint32_t driver_version, vendor_id, device_id, reserved;
    char program_version[32];
    uint64_t data_size;
    uint64_t checksum; /* checksum() of the data */
};

/* FNV-1a's step over 8-byte words, then the bytes left: a checksum of megabytes of driver data
 * that costs the start of a process little. */
static uint64_t checksum(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void expected_header(const struct gpu_caps *caps, struct cache_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, CACHE_MAGIC, sizeof h->magic);
    memcpy(h->device_uuid, caps->device_uuid, VK_UUID_SIZE);
    memcpy(h->pipeline_cache_uuid, caps->pipeline_cache_uuid, VK_UUID_SIZE);
    h->driver_version = caps->driver_version;
    h->vendor_id = caps->vendor_id;
    h->device_id = caps->device_id;
    snprintf(h->program_version, sizeof h->program_version, "%s", PPOCR_VERSION);
}

/* mkdir -p */
static bool make_dirs(const char *dir)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return false;
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                return false;
            *p = '/';
        }
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

/* The driver data of a valid file for this device (and its checksum), or NULL. */
static void *read_cache(const struct gpu_caps *caps, const char *path, size_t *size, uint64_t *sum)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct cache_header want, got;
    expected_header(caps, &want);
    void *data = NULL;
    if (fread(&got, sizeof got, 1, f) == 1 && got.data_size >= sizeof(VkPipelineCacheHeaderVersionOne) &&
        got.data_size < (1ull << 31) && memcmp(&got, &want, offsetof(struct cache_header, data_size)) == 0) {
        data = malloc(got.data_size + 1);
        /* the +1 byte read must fail: a longer file is not what we wrote */
        if (data &&
            (fread(data, 1, got.data_size + 1, f) != got.data_size || checksum(data, got.data_size) != got.checksum)) {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    if (!data)
        return NULL;
    /* the driver's own header must agree too */
    VkPipelineCacheHeaderVersionOne vh;
    memcpy(&vh, data, sizeof vh);
    if (vh.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || vh.vendorID != caps->vendor_id ||
        vh.deviceID != caps->device_id || memcmp(vh.pipelineCacheUUID, caps->pipeline_cache_uuid, VK_UUID_SIZE) != 0) {
        free(data);
        return NULL;
    }
    *size = got.data_size;
    *sum = got.checksum;
    return data;
}

void gpu_pipeline_cache_read(const struct gpu_caps *caps, const char *dir, struct gpu_pipeline_cache_file *f)
{
    memset(f, 0, sizeof *f);
    if (!dir[0])
        return;
    char uuid[2 * VK_UUID_SIZE + 1];
    for (unsigned i = 0; i < VK_UUID_SIZE; i++)
        snprintf(uuid + 2 * i, 3, "%02x", caps->device_uuid[i]);
    snprintf(f->path, sizeof f->path, "%s/pipelines-%s-%08x-%s.bin", dir, uuid, caps->driver_version, PPOCR_VERSION);
    f->data = read_cache(caps, f->path, &f->size, &f->sum);
}

int gpu_pipeline_cache_open(struct gpu_device *dev, struct gpu_pipeline_cache_file *f, struct gpu_pipeline_cache *c)
{
    snprintf(c->path, sizeof c->path, "%s", f->path);
    void *data = f->data;
    size_t size = data ? f->size : 0;
    const uint64_t sum = f->sum;
    f->data = NULL;
    VkPipelineCacheCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, .initialDataSize = size, .pInitialData = data};
    VkResult r = vkCreatePipelineCache(dev->device, &ci, NULL, &c->handle);
    if (r != VK_SUCCESS && data) {
        /* the driver refused our data after all: start empty */
        free(data);
        data = NULL;
        size = 0;
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        r = vkCreatePipelineCache(dev->device, &ci, NULL, &c->handle);
    }
    if (r != VK_SUCCESS) {
        c->handle = VK_NULL_HANDLE;
        free(data);
        return gpu_device_fail_vk(dev, r, "creating the pipeline cache");
    }
    c->loaded_size = size;
    c->loaded_sum = data ? sum : 0;
    free(data);
    return GPU_OK;
}

static void warn(const char *path, const char *what)
{
    fprintf(stderr, "ppocr-vk: warning: not saving the pipeline cache %s: %s\n", path, what);
}

static void write_cache(struct gpu_device *dev, const struct gpu_pipeline_cache *c)
{
    size_t size = 0;
    if (vkGetPipelineCacheData(dev->device, c->handle, &size, NULL) != VK_SUCCESS || size == 0)
        return;
    void *data = malloc(size);
    if (!data)
        return;
    VkResult r = vkGetPipelineCacheData(dev->device, c->handle, &size, data);
    uint64_t sum = checksum(data, size);
    if (r != VK_SUCCESS || (size == c->loaded_size && sum == c->loaded_sum)) {
        free(data);
        return; /* unchanged, or nothing reliable to save */
    }
    struct cache_header h;
    expected_header(&dev->caps, &h);
    h.data_size = size;
    h.checksum = sum;

    char dir[1024], tmp[1100];
    snprintf(dir, sizeof dir, "%s", c->path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (!make_dirs(dir)) {
            warn(c->path, strerror(errno));
            free(data);
            return;
        }
    }
    /* rename() is atomic: a reader sees the old file or the new one, never half of one */
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", c->path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, c->path) != 0)
        ok = false;
    if (!ok) {
        warn(c->path, strerror(errno));
        remove(tmp);
    }
    free(data);
}

void gpu_pipeline_cache_close(struct gpu_device *dev, struct gpu_pipeline_cache *c)
{
    if (!c->handle)
        return;
    if (c->path[0] && !gpu_device_lost(dev))
        write_cache(dev, c);
    vkDestroyPipelineCache(dev->device, c->handle, NULL);
    c->handle = VK_NULL_HANDLE;
}

void gpu_pipeline_cache_describe(const struct gpu_pipeline_cache *c, struct gpu_pipeline_cache_info *out)
{
    out->path = c->path;
    out->loaded = c->loaded_sum != 0 || c->loaded_size != 0;
    out->loaded_bytes = c->loaded_size;
}
