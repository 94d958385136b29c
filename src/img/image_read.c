/* Reading an image file or stream into memory, with one-line reasons for what goes wrong. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "img/image_internal.h"

static enum ppocr_status errno_status(int e)
{
    switch (e) {
    case ENOENT:
    case ENOTDIR: return PPOCR_ERR_NOT_FOUND;
    case EACCES:
    case EPERM: return PPOCR_ERR_PERMISSION;
    case EISDIR: return PPOCR_ERR_IS_DIRECTORY;
    case ENOMEM: return PPOCR_ERR_NO_MEMORY;
    default: return PPOCR_ERR_IO;
    }
}

static enum ppocr_status fail_errno(int e, const char *name, const char *what, char *err, size_t err_len)
{
    enum ppocr_status st = errno_status(e);
    const char *reason = st == PPOCR_ERR_NOT_FOUND      ? "no such file"
                         : st == PPOCR_ERR_PERMISSION   ? "permission denied"
                         : st == PPOCR_ERR_IS_DIRECTORY ? "is a directory, not an image file"
                                                        : strerror(e);
    snprintf(err, err_len, "%s: cannot %s: %s", name, what, reason);
    return st;
}

enum ppocr_status read_fd_bytes(int fd, const char *name, uint8_t **data, size_t *size, char *err, size_t err_len)
{
    *data = NULL;
    *size = 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail_errno(errno, name, "read", err, err_len);
    if (S_ISDIR(st.st_mode))
        return fail_errno(EISDIR, name, "read", err, err_len);
    if (S_ISREG(st.st_mode) && st.st_size > PPOCR_IMAGE_MAX_FILE_BYTES) {
        snprintf(err, err_len, "%s: file too large (%lld bytes, the limit is %lld)", name, (long long)st.st_size,
                 PPOCR_IMAGE_MAX_FILE_BYTES);
        return PPOCR_ERR_TOO_LARGE;
    }
    /* a regular file's size is known; a pipe grows its buffer as it goes */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        goto oom;
    for (;;) {
        if (len == cap) {
            if (cap > (size_t)PPOCR_IMAGE_MAX_FILE_BYTES) {
                free(buf);
                snprintf(err, err_len, "%s: input too large (more than %lld bytes)", name, PPOCR_IMAGE_MAX_FILE_BYTES);
                return PPOCR_ERR_TOO_LARGE;
            }
            size_t grown_cap =
                cap * 2 > (size_t)PPOCR_IMAGE_MAX_FILE_BYTES + 1 ? (size_t)PPOCR_IMAGE_MAX_FILE_BYTES + 1 : cap * 2;
            uint8_t *grown = realloc(buf, grown_cap);
            if (!grown)
                goto oom;
            buf = grown;
            cap = grown_cap;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            return fail_errno(e, name, "read", err, err_len);
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (len == 0) {
        free(buf);
        snprintf(err, err_len, "%s: empty file (0 bytes)", name);
        return PPOCR_ERR_EMPTY;
    }
    *data = buf;
    *size = len;
    return PPOCR_OK;
oom:
    free(buf);
    snprintf(err, err_len, "%s: out of memory reading the file", name);
    return PPOCR_ERR_NO_MEMORY;
}

enum ppocr_status ppocr_image_load_file(const char *path, enum ppocr_alpha_mode alpha, struct ppocr_image *img,
                                        char *err, size_t err_len)
{
    memset(img, 0, sizeof *img);
    /* O_NONBLOCK: a FIFO is refused below instead of waiting for a writer (and a regular file
     * reads the same either way) */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return fail_errno(errno, path, "open", err, err_len);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail_errno(e, path, "read", err, err_len);
    }
    if (!S_ISREG(st.st_mode)) {
        /* a device would be read for ever (/dev/zero) or not at all; bytes from a pipe go
         * through ppocr_image_load_fd */
        close(fd);
        if (S_ISDIR(st.st_mode))
            return fail_errno(EISDIR, path, "read", err, err_len);
        snprintf(err, err_len, "%s: not a regular file (%s)", path,
                 S_ISFIFO(st.st_mode)   ? "a FIFO"
                 : S_ISCHR(st.st_mode)  ? "a character device"
                 : S_ISBLK(st.st_mode)  ? "a block device"
                 : S_ISSOCK(st.st_mode) ? "a socket"
                                        : "a special file");
        return PPOCR_ERR_IO;
    }
    enum ppocr_status status = ppocr_image_load_fd(fd, path, alpha, img, err, err_len);
    close(fd);
    return status;
}

enum ppocr_status ppocr_image_load_fd(int fd, const char *name, enum ppocr_alpha_mode alpha, struct ppocr_image *img,
                                      char *err, size_t err_len)
{
    memset(img, 0, sizeof *img);
    uint8_t *data;
    size_t size;
    enum ppocr_status st = read_fd_bytes(fd, name, &data, &size, err, err_len);
    if (st != PPOCR_OK)
        return st;
    st = ppocr_image_load_memory(data, size, name, alpha, img, err, err_len);
    free(data);
    return st;
}
