/* The Khronos validation layer as a test oracle: with PPOCR_VK_VALIDATE=1 (or
 * gpu_options.validate) every warning or error it reports is printed to stderr as one line and
 * counted, and a process that saw any exits with status 86 instead of its own.
 *
 * Threads: any; the count is an atomic. */
#ifndef PPOCR_GPU_VALIDATION_H
#define PPOCR_GPU_VALIDATION_H

/* Validation messages seen so far in this process. */
unsigned gpu_validation_message_count(void);

#endif
