/* The part of XLA's FFI C interface (the stable ABI behind jax.ffi; its
 * reference header is xla/ffi/api/c_api.h, which jaxlib ships) that
 * xla_ffi.c uses: the call frame a handler receives, buffers, scalar and
 * array attributes, error creation and the metadata query. Declared here so
 * that the handler builds without jaxlib; the layouts are XLA's, field for
 * field, and only ever grow at their ends (every struct carries its size). */
#ifndef FASTACT_XLA_FFI_ABI_H
#define FASTACT_XLA_FFI_ABI_H
#include <stddef.h>
#include <stdint.h>

/* the interface version this handler is written against */
enum { FA_XLA_FFI_MAJOR = 0, FA_XLA_FFI_MINOR = 1 };

typedef struct fa_xla_extension {
    size_t struct_size;
    int type; /* 1: metadata */
    struct fa_xla_extension *next;
} fa_xla_extension;
enum { FA_XLA_EXTENSION_METADATA = 1 };

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    int major_version, minor_version;
} fa_xla_api_version;

typedef struct fa_xla_error fa_xla_error; /* opaque: XLA's */

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    const char *message;
    int errc; /* 3: invalid argument */
} fa_xla_error_create_args;
enum { FA_XLA_INVALID_ARGUMENT = 3 };

/* the function table a call frame points to, up to the one entry used */
typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    fa_xla_api_version api_version;
    const void *internal_api;
    fa_xla_error *(*error_create)(fa_xla_error_create_args *args);
} fa_xla_api;

enum { FA_XLA_F16 = 10, FA_XLA_F32 = 11, FA_XLA_F64 = 12, FA_XLA_BF16 = 16, FA_XLA_S32 = 4, FA_XLA_S64 = 5 };

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    int dtype;
    void *data;
    int64_t rank;
    int64_t *dims;
} fa_xla_buffer;

typedef struct {
    int dtype;
    void *value;
} fa_xla_scalar;

typedef struct {
    int dtype;
    size_t size;
    void *data;
} fa_xla_array;

typedef struct {
    const char *ptr;
    size_t len;
} fa_xla_bytes;

enum { FA_XLA_ATTR_ARRAY = 1, FA_XLA_ATTR_SCALAR = 3 };

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    int64_t size;
    int *types; /* 1: buffer, for arguments and results alike */
    void **items;
} fa_xla_list;

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    int64_t size;
    int *types;
    fa_xla_bytes **names;
    void **attrs;
} fa_xla_attrs;

typedef struct {
    size_t struct_size;
    fa_xla_extension *extension_start;
    const fa_xla_api *api;
    void *ctx;
    int stage; /* 3: execute */
    fa_xla_list args;
    fa_xla_list rets;
    fa_xla_attrs attrs;
    void *future;
} fa_xla_call_frame;
enum { FA_XLA_STAGE_EXECUTE = 3 };

/* what a handler reports when XLA asks (the metadata extension) */
typedef struct {
    size_t struct_size;
    fa_xla_api_version api_version;
    uint32_t traits;
} fa_xla_metadata;

typedef struct {
    fa_xla_extension extension_base;
    fa_xla_metadata *metadata;
} fa_xla_metadata_extension;
#endif
