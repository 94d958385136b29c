/* Linked into every test program and the sanitizer build's ppocr-vk (tests/CMakeLists.txt).
 *
 * LeakSanitizer names the frames of a leak at exit. By then the Vulkan loader has dlclose()d the
 * driver and the layers, so their own leftover allocations show as "<unknown module>" and
 * tests/lsan.supp cannot match them. A dlclose that keeps every library mapped lets the
 * suppressions work; leaks in our code are reported as before, and Vulkan objects we forget to
 * destroy are still caught by the validation layer at vkDestroyDevice / vkDestroyInstance. */
#if defined(__SANITIZE_ADDRESS__)
#define PPOCR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PPOCR_TEST_ASAN 1
#endif
#endif

#ifdef PPOCR_TEST_ASAN
int dlclose(void *handle);
int dlclose(void *handle)
{
    (void)handle;
    return 0;
}

/* The CPU backend dlopen()s oneDNN, whose OpenMP threads hold TLS of a library loaded at run time.
 * GCC 12's ASan records such dynamic TLS blocks with wrong bounds under Debian 12's glibc, and
 * LeakSanitizer then crashes scanning them at exit ("Tracer caught signal 11", a DTLS range of
 * tens of GiB in its verbose log). Not tracking dynamic TLS avoids it; LSan still scans every
 * thread's stack, static TLS and the heap. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "intercept_tls_get_addr=0";
}
#endif
