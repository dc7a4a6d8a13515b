"""fastact's controller for threadpoolctl (optional): with it registered,
``threadpoolctl.threadpool_limits(1)`` limits fastact's pool too, and
``threadpool_info()`` lists it (user_api "fastact").

threadpoolctl finds the controllers' libraries among the loaded shared
objects by file-name prefix ("_ext": fastact/_ext.*.so) and keeps one only if
it exports the check_symbols, so another package's _ext module is not taken
for fastact's. Registered at fastact import when threadpoolctl is installed;
without it, nothing happens.
"""
import ctypes


def register():
    try:
        import threadpoolctl
        from threadpoolctl import LibController
    except ImportError:  # optional
        return False
    if not hasattr(threadpoolctl, "register"):  # threadpoolctl < 3.0: no third-party API
        return False

    class FastactController(LibController):
        user_api = "fastact"
        internal_api = "fastact"
        filename_prefixes = ("_ext",)
        check_symbols = ("fa_num_threads", "fa_set_num_threads_from", "fa_thread_source")

        def get_num_threads(self):
            return self.dynlib.fa_num_threads()

        def set_num_threads(self, num_threads):
            # source 4: FA_THREADS_FROM_THREADPOOLCTL, so `python -m fastact` can say so
            self.dynlib.fa_set_num_threads_from(ctypes.c_int(int(num_threads)), ctypes.c_int(4))

        def get_version(self):
            from fastact import __version__
            return __version__

    if not any(getattr(c, "user_api", None) == "fastact" for c in threadpoolctl._ALL_CONTROLLERS):
        threadpoolctl.register(FastactController)
    return True
