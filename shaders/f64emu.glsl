// IEEE double arithmetic emulated with 64-bit integers (add, mul, div, lrint; round to nearest
// even; zero but no subnormals, infinities or NaN, which the crop warp never meets). The crop warp
// uses it only where float-float lands within a hair of a rounding tie of OpenCV's coordinates:
// there the exact double rounding sequence decides, and only a double computation reproduces it.
#ifndef PPOCR_F64EMU_GLSL
#define PPOCR_F64EMU_GLSL

#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

struct f64 {
    uint s;     // sign
    int e;      // value = m * 2^e
    uint64_t m; // 0, or in [2^52, 2^53)
};

f64 f64_zero()
{
    return f64(0u, 0, 0ul);
}

f64 f64_from_bits(uint lo, uint hi)
{
    uint ex = (hi >> 20) & 0x7ffu;
    if (ex == 0u)
        return f64_zero();
    uint64_t frac = (uint64_t(hi & 0xfffffu) << 32) | uint64_t(lo);
    return f64(hi >> 31, int(ex) - 1075, frac | (1ul << 52));
}

int f64_msb(uint64_t x)
{
    uint hi = uint(x >> 32);
    return hi != 0u ? 32 + findMSB(hi) : findMSB(uint(x));
}

// Rounds m 2^e (m < 2^64; sticky: nonzero bits below m) to 53 bits.
f64 f64_round(uint s, int e, uint64_t m, bool sticky)
{
    if (m == 0ul)
        return f64_zero();
    int msb = f64_msb(m);
    if (msb > 52) {
        int sh = msb - 52;
        uint64_t rem = m & ((1ul << sh) - 1ul), halfway = 1ul << (sh - 1);
        m >>= sh;
        e += sh;
        if (rem > halfway || (rem == halfway && (sticky || (m & 1ul) != 0ul))) {
            m += 1ul;
            if (m == (1ul << 53)) {
                m >>= 1;
                e += 1;
            }
        }
    } else if (msb < 52) {
        m <<= (52 - msb);
        e -= 52 - msb;
    }
    return f64(s, e, m);
}

f64 f64_from_int(int v)
{
    return f64_round(v < 0 ? 1u : 0u, 0, uint64_t(abs(v)), false);
}

f64 f64_mul(f64 a, f64 b)
{
    if (a.m == 0ul || b.m == 0ul)
        return f64_zero();
    uint64_t ah = a.m >> 32, al = a.m & 0xfffffffful, bh = b.m >> 32, bl = b.m & 0xfffffffful;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xfffffffful) + (hl & 0xfffffffful);
    uint64_t lo = (ll & 0xfffffffful) | (mid << 32);
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    // the 106-bit product hi:lo has its top bit at 104 or 105: keep the top 64 bits
    uint64_t m = (hi << 22) | (lo >> 42);
    return f64_round(a.s ^ b.s, a.e + b.e + 42, m, (lo & ((1ul << 42) - 1ul)) != 0ul);
}

f64 f64_add(f64 a, f64 b)
{
    if (a.m == 0ul)
        return b;
    if (b.m == 0ul)
        return a;
    if (b.e > a.e || (b.e == a.e && b.m > a.m)) {
        f64 t = a;
        a = b;
        b = t;
    }
    int d = a.e - b.e;
    uint64_t am = a.m << 10, bm = b.m << 10;  // 10 guard bits
    bool sticky = false;
    if (d >= 64) {
        sticky = true;
        bm = 0ul;
    } else if (d > 0) {
        sticky = (bm & ((1ul << d) - 1ul)) != 0ul;
        bm >>= d;
    }
    uint64_t m;
    if (a.s == b.s) {
        m = am + bm;
    } else {
        // subtracting bm plus a fraction: one less, the fraction's complement stays sticky
        m = am - bm - (sticky ? 1ul : 0ul);
    }
    return f64_round(a.s, a.e - 10, m, sticky);
}

f64 f64_div(f64 a, f64 b)
{
    if (a.m == 0ul || b.m == 0ul)
        return f64_zero();
    uint64_t r = a.m, q = 0ul;
    int e = a.e - b.e;
    if (r < b.m) {
        r <<= 1;
        e -= 1;
    }
    for (int i = 0; i < 62; i++) {
        q <<= 1;
        if (r >= b.m) {
            r -= b.m;
            q |= 1ul;
        }
        r <<= 1;
    }
    return f64_round(a.s ^ b.s, e - 61, q, r != 0ul);
}

// lrint (ties to even), saturated to +-2^30 (far outside any image).
int f64_lrint(f64 a)
{
    if (a.m == 0ul)
        return 0;
    int v;
    if (a.e >= -22) {
        v = 1 << 30;
    } else {
        int sh = -a.e;
        if (sh > 54)
            return 0;
        uint64_t ip = a.m >> sh, rem = a.m & ((1ul << sh) - 1ul), halfway = 1ul << (sh - 1);
        if (rem > halfway || (rem == halfway && (ip & 1ul) != 0ul))
            ip += 1ul;
        v = int(min(ip, uint64_t(1 << 30)));
    }
    return a.s != 0u ? -v : v;
}

#endif
