# Declarations of the C side (src_c/runtime/fastact.h, src_c/runtime/fastact_loops.h). The
# operations themselves come from the manifest, in the generated _ops.pxi.

cdef extern from "runtime/fastact.h" nogil:
    ctypedef enum fa_isa:
        FA_ISA_SCALAR, FA_ISA_AVX2, FA_ISA_AVX512, FA_ISA_AVX512_EMULATED, FA_ISA_NEON, FA_N_ISAS
    const char *fa_isa_name(int isa)
    int fa_isa_supported(int isa)
    int fa_isa_best()
    int fa_isa_current()
    int fa_isa_set(int isa)
    int fa_num_threads()
    void fa_set_num_threads(int n)
    void fa_set_num_threads_from(int n, int source)
    int fa_cpus_available()
    int fa_thread_source()
    const char *fa_thread_source_name(int source)
    double fa_wake_ns(int hot)
    void fa_use_openmp(void *gomp_parallel, void *omp_get_max_threads)
    int fa_openmp_scope(int on)
    long fa_openmp_team_calls()

cdef extern from "runtime/fastact_loops.h" nogil:
    enum: FA_LOOP_MAX_ARGS
    void fa_loop_f16(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_loop_f32(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_loop_f64(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_loop_bf16(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    const void *fa_loop_data(int op, int direction, int tier)
    const void *fa_loop_data_fixed(int op, int direction, int tier, const double *params)
    Py_ssize_t fa_thread_threshold(int op, int tier, int f64)
    void fa_set_thread_threshold(int op, int f64, Py_ssize_t n)
    double fa_cost_ns(int op, int direction, int tier, int dtype, int gathered)
    double fa_cost_estimate_ns(int op, int f64)
    void fa_row_loop_f16(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_row_loop_f32(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_row_loop_f64(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    void fa_row_loop_bf16(char **args, const Py_ssize_t *dims, const Py_ssize_t *steps, void *data)
    const void *fa_row_loop_data(int op, int direction, int tier)
    enum:
        FA_ROW_SOFTMAX, FA_ROW_LOG_SOFTMAX

cdef extern from "adapters/xla_ffi.h" nogil:
    void *fa_xla_ffi_activation_address()

cdef extern from "half/table16.h" nogil:
    void fa_table16_enable(int on)
    int fa_table16_enabled()
    void fa_table16_forget()
    long fa_table16_published()
