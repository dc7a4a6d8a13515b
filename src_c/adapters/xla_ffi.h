/* fastact's XLA FFI handler (xla_ffi.c), for jax.ffi.register_ffi_target */
#ifndef FASTACT_XLA_FFI_H
#define FASTACT_XLA_FFI_H
void *fa_xla_ffi_activation_address(void);
#endif
