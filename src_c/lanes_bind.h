/* Binds the generic lane names of kernels_lanes.inc to the float (vf) or
 * double (vd) layer and its constants: define FA_LANES_FLOAT or
 * FA_LANES_DOUBLE first; lanes_unbind.h undoes it. */
#if defined(FA_LANES_FLOAT)
#define V vf
#define M mf
#define S float
#define FA_L(name) name##_f
#define FA_L_W VF_W
#define FA_L_DTYPE f32
#define v_load vf_load
#define v_loadn vf_loadn
#define v_store vf_store
#define v_storen vf_storen
#define v_set vf_set
#define v_add vf_add
#define v_sub vf_sub
#define v_mul vf_mul
#define v_div vf_div
#define v_fma vf_fma
#define v_fnma vf_fnma
#define v_min vf_min
#define v_max vf_max
#define v_abs vf_abs
#define v_copysign vf_copysign
#define v_lt vf_lt
#define v_gt vf_gt
#define v_gt_or_nan vf_gt_or_nan
#define v_isnan vf_isnan
#define v_select vf_select
#define v_pow2 vf_pow2
#define m_or mf_or
#define m_any mf_any
#define FA_L_SHIFTER 0x1.8p23f
#define FA_L_MIN_EXPONENT (-126.0f)
#define FA_L_TINY 0x1p-125f /* x/2 is subnormal below */
#define FA_L_LOG2E FA_LOG2EF
#define FA_L_LN2_HI FA_LN2F_HI
#define FA_L_LN2_LO FA_LN2F_LO
#define FA_L_EXP FA_EXPF
#define FA_L_EXP_DEGREE FA_EXPF_DEGREE
#define FA_L_TANH_C1_HI FA_TANH_C1F_HI
#define FA_L_TANH_C1_LO FA_TANH_C1F_LO
#define FA_L_TANH_C3_HI FA_TANH_C3F_HI
#define FA_L_TANH_C3_LO FA_TANH_C3F_LO
/* a beyond which f(-a) and f'(-a) underflow to -0 and f(a) = a; below
 * a_fast, 2^k stays normal (see fa_needs_care) */
#define FA_L_SILU_A_MAX 110.0f
#define FA_L_SILU_A_FAST 87.0f
#define FA_L_GELU_TANH_A_MAX 11.0f
#define FA_L_GELU_TANH_A_FAST 9.5f
#elif defined(FA_LANES_DOUBLE)
#define V vd
#define M md
#define S double
#define FA_L(name) name##_d
#define FA_L_W VD_W
#define FA_L_DTYPE f64
#define v_load vd_load
#define v_loadn vd_loadn
#define v_store vd_store
#define v_storen vd_storen
#define v_set vd_set
#define v_add vd_add
#define v_sub vd_sub
#define v_mul vd_mul
#define v_div vd_div
#define v_fma vd_fma
#define v_fnma vd_fnma
#define v_min vd_min
#define v_max vd_max
#define v_abs vd_abs
#define v_copysign vd_copysign
#define v_lt vd_lt
#define v_gt vd_gt
#define v_gt_or_nan vd_gt_or_nan
#define v_isnan vd_isnan
#define v_select vd_select
#define v_pow2 vd_pow2
#define m_or md_or
#define m_any md_any
#define FA_L_SHIFTER 0x1.8p52
#define FA_L_MIN_EXPONENT (-1022.0)
#define FA_L_TINY 0x1p-1021
#define FA_L_LOG2E FA_LOG2E
#define FA_L_LN2_HI FA_LN2_HI
#define FA_L_LN2_LO FA_LN2_LO
#define FA_L_EXP FA_EXP_F64
#define FA_L_EXP_DEGREE FA_EXP_F64_DEGREE
#define FA_L_TANH_C1_HI FA_TANH_C1_HI
#define FA_L_TANH_C1_LO FA_TANH_C1_LO
#define FA_L_TANH_C3_HI FA_TANH_C3_HI
#define FA_L_TANH_C3_LO FA_TANH_C3_LO
#define FA_L_SILU_A_MAX FA_SILU_A_MAX
#define FA_L_SILU_A_FAST 708.0
#define FA_L_GELU_TANH_A_MAX FA_GELU_TANH_A_MAX
#define FA_L_GELU_TANH_A_FAST 21.0
#else
#error "define FA_LANES_FLOAT or FA_LANES_DOUBLE"
#endif
