/* Binds the generic lane names of kernels_lanes.inc to the float (vf) or
 * double (vd) layer and its constants: define FA_LANES_FLOAT or
 * FA_LANES_DOUBLE first; lanes_unbind.h undoes it. */
#if defined(FA_LANES_FLOAT)
#define V vf
#define M mf
#define S float
#define FA_L(name) name##_f
#define FA_LB(name) name##_fb /* over bundles: lanes_bundle.h */
#define VB vfb_t
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
#define v_fms vf_fms
#define v_min vf_min
#define v_max vf_max
#define v_max_skip_nan vf_max_skip_nan
#define v_abs vf_abs
#define v_copysign vf_copysign
#define v_lt vf_lt
#define v_gt vf_gt
#define v_gt_or_nan vf_gt_or_nan
#define v_isnan vf_isnan
#define v_select vf_select
#define v_pow2 vf_pow2
#define v_scale_normal vf_scale_normal
#define v_half_binade_bits vf_half_binade_bits
#define v_lookup8_wrap vf_lookup8_wrap
#define v_lookup16 vf_lookup16
#define v_half_binade_bits_above vf_half_binade_bits_above
#define v_abs_clamp_quiet vf_abs_clamp_quiet
#define v_scale_shifted vf_scale_shifted
#define v_shifter_bits vf_shifter_bits
#define m_or mf_or
#define m_any mf_any
#define FA_L_SHIFTER 0x1.8p23f
#define FA_L_MIN_EXPONENT (-126.0f)
#define FA_L_TINY FA_TINY_F
#define FA_L_LOG2E FA_LOG2EF
#define FA_L_LN2_HI FA_LN2F_HI
#define FA_L_LN2_LO FA_LN2F_LO
#define FA_L_EXP FA_EXPF
#define FA_L_EXP_DEGREE FA_EXPF_DEGREE
#define FA_L_EXP_FAST FA_EXPF_FAST
#define FA_L_EXP_FAST_DEGREE FA_EXPF_FAST_DEGREE
#define FA_L_MAX_FINITE 0x1.fffffep127f
#define FA_L_SQRT2 FA_SQRT2F
#define FA_L_LN2_DD_HI FA_LN2F_DD_HI
#define FA_L_LN2_DD_LO FA_LN2F_DD_LO
#define FA_L_SIXTH_HI FA_SIXTHF_DD_HI
#define FA_L_SIXTH_LO FA_SIXTHF_DD_LO
#define FA_L_LOG_ATANH FA_LOG_ATANHF
#define FA_L_LOG_ATANH_DEGREE FA_LOG_ATANHF_DEGREE
#define FA_L_SELU_SCALE FA_SELU_SCALEF
#define FA_L_SELU_SCALE_ALPHA FA_SELU_SCALE_ALPHAF
/* FA_L_PICK(float value, double value) */
#define FA_L_PICK(f, d) (f)
#define FA_L_TANH_C1_HI FA_TANH_C1F_HI
#define FA_L_TANH_C1_LO FA_TANH_C1F_LO
#define FA_L_TANH_C3_HI FA_TANH_C3F_HI
#define FA_L_TANH_C3_LO FA_TANH_C3F_LO
/* FA_L_C(NAME): fa_coeffs.h's float constant FA_NAME_F, e.g. an op's
 * saturation (OP_A_MAX) or fast-variant (OP_A_FAST) threshold */
#define FA_L_C(name) FA_##name##_F
#define VI vi
#define v_binade_index vf_binade_index
#define v_lookup8 vf_lookup8
#define FA_L_GELU_G FA_GELU_GF
#define FA_L_GELU_G_MID FA_GELU_GF_MID
#define FA_L_GELU_G_C0_LO FA_GELU_GF_C0_LO
#define FA_L_GELU_G_DEGREE FA_GELU_GF_DEGREE
#define FA_L_GELU_G_FIRST_EXPONENT FA_GELU_GF_FIRST_EXPONENT
/* the fast tier's G: its own intervals (half-binades of a + 1) and table */
#define FA_L_GELU_G_FAST_INDEX(a) vf_half_binade_index(vf_add(a, vf_set(FA_GELU_GF_FAST_OFFSET)), FA_GELU_GF_FAST_FIRST)
#define FA_L_GELU_G_FAST FA_GELU_GF_FAST
#define FA_L_GELU_G_FAST_MID FA_GELU_GF_FAST_MID
#define FA_L_GELU_G_FAST_DEGREE FA_GELU_GF_FAST_DEGREE
#define FA_L_GELU_H_FAST FA_GELU_HF_FAST
#define FA_L_GELU_H_FAST_MID FA_GELU_HF_FAST_MID
#define FA_L_GELU_H_FAST_DEGREE FA_GELU_HF_FAST_DEGREE
#elif defined(FA_LANES_DOUBLE)
#define V vd
#define M md
#define S double
#define FA_L(name) name##_d
#define FA_LB(name) name##_db
#define VB vdb_t
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
#define v_fms vd_fms
#define v_min vd_min
#define v_max vd_max
#define v_max_skip_nan vd_max_skip_nan
#define v_abs vd_abs
#define v_copysign vd_copysign
#define v_round_float vd_round_float
#define v_lt vd_lt
#define v_gt vd_gt
#define v_gt_or_nan vd_gt_or_nan
#define v_isnan vd_isnan
#define v_select vd_select
#define v_pow2 vd_pow2
#define v_scale_normal vd_scale_normal
#define m_or md_or
#define m_any md_any
#define FA_L_SHIFTER 0x1.8p52
#define FA_L_MIN_EXPONENT (-1022.0)
#define FA_L_TINY FA_TINY
#define FA_L_LOG2E FA_LOG2E
#define FA_L_LN2_HI FA_LN2_HI
#define FA_L_LN2_LO FA_LN2_LO
#define FA_L_EXP FA_EXP_F64
#define FA_L_EXP_DEGREE FA_EXP_F64_DEGREE
#define FA_L_EXP_FAST FA_EXP_F64_FAST
#define FA_L_EXP_FAST_DEGREE FA_EXP_F64_FAST_DEGREE
#define FA_L_MAX_FINITE 0x1.fffffffffffffp1023
#define FA_L_SQRT2 FA_SQRT2
#define FA_L_LN2_DD_HI FA_LN2_DD_HI
#define FA_L_LN2_DD_LO FA_LN2_DD_LO
#define FA_L_SIXTH_HI FA_SIXTH_DD_HI
#define FA_L_SIXTH_LO FA_SIXTH_DD_LO
#define FA_L_LOG_ATANH FA_LOG_ATANH_F64
#define FA_L_LOG_ATANH_DEGREE FA_LOG_ATANH_F64_DEGREE
#define FA_L_LOG1P_FAST FA_LOG1P_FAST_F64
#define FA_L_LOG1P_FAST_DEGREE FA_LOG1P_FAST_F64_DEGREE
#define FA_L_SELU_SCALE FA_SELU_SCALE
#define FA_L_SELU_SCALE_ALPHA FA_SELU_SCALE_ALPHA_HI
#define FA_L_PICK(f, d) (d)
#define FA_L_TANH_C1_HI FA_TANH_C1_HI
#define FA_L_TANH_C1_LO FA_TANH_C1_LO
#define FA_L_TANH_C3_HI FA_TANH_C3_HI
#define FA_L_TANH_C3_LO FA_TANH_C3_LO
/* FA_L_C(NAME): fa_coeffs.h's double constant FA_NAME */
#define FA_L_C(name) FA_##name
#define VI vdi
#define v_binade_index vd_binade_index
#define v_lookup8 vd_lookup8
#define FA_L_GELU_G FA_GELU_GD
#define FA_L_GELU_G_MID FA_GELU_GD_MID
#define FA_L_GELU_G_C0_LO FA_GELU_GD_C0_LO
#define FA_L_GELU_G_DEGREE FA_GELU_GD_DEGREE
#define FA_L_GELU_G_FIRST_EXPONENT FA_GELU_GD_FIRST_EXPONENT
/* the fast tier's G: in double, the accurate tier's (a shorter fit buys little) */
#define FA_L_GELU_G_FAST_INDEX(a) vd_binade_index(a, FA_GELU_GD_FIRST_EXPONENT)
#define FA_L_GELU_G_FAST FA_GELU_GD
#define FA_L_GELU_G_FAST_MID FA_GELU_GD_MID
#define FA_L_GELU_G_FAST_DEGREE FA_GELU_GD_DEGREE
#else
#error "define FA_LANES_FLOAT or FA_LANES_DOUBLE"
#endif
