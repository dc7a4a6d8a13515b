"""cibuildwheel's configuration (pyproject.toml), read by cibuildwheel itself:
each platform (Linux, macOS, Windows) builds CPython 3.10-3.13 for its
architectures, and exactly the x86-64 builds require the x86 kernels
(FASTACT_REQUIRE_X86_KERNELS=1: setup.py fails rather than build the
portable sets alone). Run from the project root with cibuildwheel installed
(`pip install cibuildwheel==4.3.5`); exits non-zero on any difference."""
import os
import subprocess
import sys

from cibuildwheel.options import CommandLineArguments, compute_options

PYTHONS = ["cp310", "cp311", "cp312", "cp313"]
ARCHS = {"linux": ["manylinux_x86_64", "manylinux_aarch64"], "macos": ["macosx_x86_64", "macosx_arm64"],
         "windows": ["win_amd64"]}
X86_64 = ("x86_64", "amd64")


def main():
    failures = []
    for platform, archs in ARCHS.items():
        listed = subprocess.run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers", "--platform",
                                 platform], capture_output=True, text=True, check=True).stdout.split()
        wanted = [f"{python}-{arch}" for python in PYTHONS for arch in archs]
        if sorted(listed) != sorted(wanted):
            failures.append(f"{platform}: builds {sorted(listed)}, expected {sorted(wanted)}")
        options = compute_options(platform, CommandLineArguments.defaults(), dict(os.environ))
        required_on = []
        for identifier in listed:
            environment = options.build_options(identifier).environment.as_dictionary(prev_environment={})
            required = environment.get("FASTACT_REQUIRE_X86_KERNELS") == "1"
            if required:
                required_on.append(identifier)
            if required != identifier.endswith(X86_64):
                failures.append(f"{identifier}: FASTACT_REQUIRE_X86_KERNELS {'set' if required else 'unset'}")
        print(f"{platform}: {len(listed)} builds; the x86 kernels required on {len(required_on)}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
