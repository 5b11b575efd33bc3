/* A fixed getrandom for benchmarks of LuaJIT (LD_PRELOAD; never for use
 * in production).
 *
 * LuaJIT seeds its PRNG from getrandom (through syscall(SYS_getrandom) or
 * the libc wrapper); the PRNG picks the trace compiler's penalty values
 * and the string hash seed, so which traces a workload gets, and its
 * instruction count, change from run to run (a 2 KB Lua patch measured
 * 31k-74k instructions). With this shim preloaded every run gets the same
 * bytes: runs of one build compare, and A/B differences are the code's.
 * Every other syscall goes to libc's. Built and preloaded by
 * `benchmarks/lua_ab.py --deterministic`:
 *     cc -O2 -shared -fPIC -o detrand.so benchmarks/detrand.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* QJSON_DETRAND_SEED=n (a number, default 0) picks another fixed draw: one
 * seed is one sample of the trace lottery, so A/B runs over a few seeds
 * show whether a difference is the code's or the draw's. */
static void fill(unsigned char *b, size_t len) {
    static int seed = -1;
    if (seed < 0) {
        const char *e = getenv("QJSON_DETRAND_SEED");
        seed = e != NULL ? atoi(e) & 0xff : 0;
    }
    for (size_t i = 0; i < len; i++) {
        b[i] = (unsigned char)(i * 37 + 11 + seed * 101);
    }
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    (void)flags;
    fill((unsigned char *)buf, len);
    return (ssize_t)len;
}

long syscall(long n, ...) {
    va_list ap;
    va_start(ap, n);
    long a[6];
    for (int i = 0; i < 6; i++) {
        a[i] = va_arg(ap, long);
    }
    va_end(ap);
    if (n == SYS_getrandom) {
        fill((unsigned char *)a[0], (size_t)a[1]);
        return a[1];
    }
    static long (*real)(long, ...) = NULL;
    if (real == NULL) {
        real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    }
    return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
