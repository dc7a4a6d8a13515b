/* Rebinds the lane names of lanes_bind.h (include that first) to bundles of
 * FA_BUNDLE vectors: V becomes a struct of FA_BUNDLE vectors and each v_*
 * operation applies the layer's operation to every member in turn, so that
 * a formula written once over V, compiled against the bundle, issues each
 * step for all the vectors before the next step. The compiler keeps the
 * members in registers and the out-of-order core then has FA_BUNDLE
 * independent chains side by side (compiled vector by vector, GCC emits one
 * whole chain after another). Functions get the suffix _fb or _db. Only the
 * operations the fast tier's formulas use (kernels_args.inc,
 * kernels_fast.inc) exist. lanes_unbind.h undoes it, with lanes_bind.h. */
#ifndef FA_BUNDLE
#define FA_BUNDLE 2
#endif

#if defined(FA_LANES_FLOAT)
#define FA_B_(name) vfb_##name
#define FA_B_NAME(name) name##_fb
#else
#define FA_B_(name) vdb_##name
#define FA_B_NAME(name) name##_db
#endif

typedef struct {
    V v[FA_BUNDLE];
} FA_B_(t);
typedef struct {
    M v[FA_BUNDLE];
} FA_B_(mask);
typedef struct {
    VI v[FA_BUNDLE];
} FA_B_(index);

#define FA_B_EACH _Pragma("GCC unroll 8") for (int j = 0; j < FA_BUNDLE; j++)
#define FA_B_UNARY(name, op)                                                                       \
    FA_INLINE FA_B_(t) FA_B_(name)(FA_B_(t) a) {                                                   \
        FA_B_(t) r;                                                                                \
        FA_B_EACH r.v[j] = op(a.v[j]);                                                             \
        return r;                                                                                  \
    }
#define FA_B_BINARY(name, op)                                                                      \
    FA_INLINE FA_B_(t) FA_B_(name)(FA_B_(t) a, FA_B_(t) b) {                                       \
        FA_B_(t) r;                                                                                \
        FA_B_EACH r.v[j] = op(a.v[j], b.v[j]);                                                     \
        return r;                                                                                  \
    }
#define FA_B_TERNARY(name, op)                                                                     \
    FA_INLINE FA_B_(t) FA_B_(name)(FA_B_(t) a, FA_B_(t) b, FA_B_(t) c) {                           \
        FA_B_(t) r;                                                                                \
        FA_B_EACH r.v[j] = op(a.v[j], b.v[j], c.v[j]);                                             \
        return r;                                                                                  \
    }
#define FA_B_LOOKUP(name, op)                                                                      \
    FA_INLINE FA_B_(t) FA_B_(name)(const S *table, FA_B_(index) i) {                               \
        FA_B_(t) r;                                                                                \
        FA_B_EACH r.v[j] = op(table, i.v[j]);                                                      \
        return r;                                                                                  \
    }
#define FA_B_TO_INDEX(name, op)                                                                    \
    FA_INLINE FA_B_(index) FA_B_(name)(FA_B_(t) a) {                                               \
        FA_B_(index) r;                                                                            \
        FA_B_EACH r.v[j] = op(a.v[j]);                                                             \
        return r;                                                                                  \
    }

FA_INLINE FA_B_(t) FA_B_(set)(S c) {
    FA_B_(t) r;
    V v = v_set(c);
    FA_B_EACH r.v[j] = v;
    return r;
}
FA_B_BINARY(add, v_add)
FA_B_BINARY(sub, v_sub)
FA_B_BINARY(mul, v_mul)
FA_B_BINARY(div, v_div)
FA_B_BINARY(min, v_min)
FA_B_BINARY(max, v_max)
FA_B_BINARY(copysign, v_copysign)
FA_B_BINARY(scale_normal, v_scale_normal)
FA_B_TERNARY(fma, v_fma)
FA_B_TERNARY(fnma, v_fnma)
FA_B_TERNARY(fms, v_fms)
FA_B_UNARY(abs, v_abs)
FA_B_LOOKUP(lookup8, v_lookup8)
FA_INLINE FA_B_(mask) FA_B_(lt)(FA_B_(t) a, FA_B_(t) b) {
    FA_B_(mask) r;
    FA_B_EACH r.v[j] = v_lt(a.v[j], b.v[j]);
    return r;
}
FA_INLINE FA_B_(t) FA_B_(select)(FA_B_(mask) m, FA_B_(t) a, FA_B_(t) b) {
    FA_B_(t) r;
    FA_B_EACH r.v[j] = v_select(m.v[j], a.v[j], b.v[j]);
    return r;
}
FA_INLINE FA_B_(index) FA_B_(gelu_g_fast_index)(FA_B_(t) a) {
    FA_B_(index) r;
    FA_B_EACH r.v[j] = FA_L_GELU_G_FAST_INDEX(a.v[j]);
    return r;
}
#if defined(FA_LANES_FLOAT)
FA_B_BINARY(scale_shifted, v_scale_shifted)
FA_B_LOOKUP(lookup8_wrap, v_lookup8_wrap)
FA_B_LOOKUP(lookup16, v_lookup16)
FA_B_TO_INDEX(half_binade_bits, v_half_binade_bits)
FA_B_TO_INDEX(shifter_bits, v_shifter_bits)
#endif

#undef FA_B_UNARY
#undef FA_B_BINARY
#undef FA_B_TERNARY
#undef FA_B_LOOKUP
#undef FA_B_TO_INDEX
#undef FA_B_EACH

/* the rebinding */
#undef V
#undef M
#undef VI
#undef FA_L
#define V FA_B_(t)
#define M FA_B_(mask)
#define VI FA_B_(index)
#define FA_L(name) FA_B_NAME(name)
#undef v_set
#undef v_add
#undef v_sub
#undef v_mul
#undef v_div
#undef v_min
#undef v_max
#undef v_copysign
#undef v_scale_normal
#undef v_fma
#undef v_fnma
#undef v_fms
#undef v_abs
#undef v_lookup8
#undef v_lt
#undef v_select
#undef FA_L_GELU_G_FAST_INDEX
#define v_set FA_B_(set)
#define v_add FA_B_(add)
#define v_sub FA_B_(sub)
#define v_mul FA_B_(mul)
#define v_div FA_B_(div)
#define v_min FA_B_(min)
#define v_max FA_B_(max)
#define v_copysign FA_B_(copysign)
#define v_scale_normal FA_B_(scale_normal)
#define v_fma FA_B_(fma)
#define v_fnma FA_B_(fnma)
#define v_fms FA_B_(fms)
#define v_abs FA_B_(abs)
#define v_lookup8 FA_B_(lookup8)
#define v_lt FA_B_(lt)
#define v_select FA_B_(select)
#define FA_L_GELU_G_FAST_INDEX FA_B_(gelu_g_fast_index)
#if defined(FA_LANES_FLOAT)
#undef v_scale_shifted
#undef v_lookup8_wrap
#undef v_lookup16
#undef v_half_binade_bits
#undef v_shifter_bits
#define v_scale_shifted FA_B_(scale_shifted)
#define v_lookup8_wrap FA_B_(lookup8_wrap)
#define v_lookup16 FA_B_(lookup16)
#define v_half_binade_bits FA_B_(half_binade_bits)
#define v_shifter_bits FA_B_(shifter_bits)
#endif
/* every other name of lanes_bind.h is left unusable here */
#undef v_load
#undef v_loadn
#undef v_store
#undef v_storen
#undef v_isnan
#undef v_gt
#undef v_gt_or_nan
#undef m_or
#undef m_any
