"""pip install --no-build-isolation -v ./python   (needs PyTorch with CUDA and nvcc)

Builds cuact_torch._C (torch.ops.cuact: every activation family and the fused ops) with
CUDAExtension, one translation unit per table group, in parallel: MAX_JOBS jobs (default: the
CPU count), with ninja's [n/N] progress under `pip -v`. CUACT_TORCH_FAMILY=0 builds the lean
library (relu and selu families and the fused ops). TORCH_CUDA_ARCH_LIST picks the GPU
architectures (e.g. "9.0"). cuact's headers are installed inside the package (for the JIT builds
of cuact_torch.activation) from ../include at build time; the source tree is not written to.
"""
import glob
import os
import re
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.normpath(os.path.join(HERE, "..", "include"))


def cuact_version():
    """MAJOR.MINOR.PATCH from include/cuact/version.cuh, the one version source."""
    with open(os.path.join(INCLUDE, "cuact", "version.cuh")) as f:
        text = f.read()
    parts = [re.search(r"#define\s+CUACT_VERSION_%s\s+(\d+)" % k, text) for k in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit("cuact_torch: include/cuact/version.cuh lacks a CUACT_VERSION_MAJOR/MINOR/PATCH line")
    return ".".join(m.group(1) for m in parts)


try:
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension
except ImportError:
    # one line, no traceback: what is missing and what to do
    sys.exit("cuact_torch needs PyTorch to build: install torch with CUDA first "
             "(https://pytorch.org/get-started/locally/), then pip install --no-build-isolation ./python")


class build_py_with_headers(build_py):
    """Adds cuact's headers under cuact_torch/include and _version.py in the build directory (not
    the source tree)."""

    def run(self):
        super().run()
        with open(os.path.join(self.build_lib, "cuact_torch", "_version.py"), "w") as f:
            f.write('"""cuact\'s version, written at build time from include/cuact/version.cuh."""\n')
            f.write("__version__ = %r\n" % cuact_version())
        target = os.path.join(self.build_lib, "cuact_torch", "include")
        for path in sorted(glob.glob(os.path.join(INCLUDE, "cuact", "**", "*.cuh"), recursive=True)):
            rel = os.path.relpath(path, INCLUDE)
            self.mkpath(os.path.dirname(os.path.join(target, rel)))
            self.copy_file(path, os.path.join(target, rel))


sys.path.insert(0, os.path.join(HERE, "cuact_torch"))
import _paths  # noqa: E402  (flags shared with the JIT path)

macros = [("CUACT_TORCH_PYMODULE", None)]
if _paths.whole_family():
    macros.append(("CUACT_TORCH_FAMILY", "1"))
sources = sorted(glob.glob(os.path.join("cuact_torch", "csrc", "*.cu")))
os.environ.setdefault("MAX_JOBS", str(os.cpu_count() or 1))
print("cuact_torch %s: %d translation units, MAX_JOBS=%s, %s" % (
    cuact_version(), len(sources), os.environ["MAX_JOBS"],
    "whole family" if _paths.whole_family() else "lean build (CUACT_TORCH_FAMILY=0)"), flush=True)

setup(
    name="cuact_torch",
    version=cuact_version(),
    description="cuact activation kernels as PyTorch custom operators",
    packages=["cuact_torch"],
    package_data={"cuact_torch": ["csrc/*.cu", "csrc/*.h"]},
    ext_modules=[
        CUDAExtension(
            name="cuact_torch._C",
            sources=sources,
            include_dirs=[INCLUDE],
            define_macros=macros,
            extra_compile_args={"cxx": _paths.CXX_FLAGS, "nvcc": _paths.NVCC_FLAGS},
        )
    ],
    cmdclass={"build_ext": BuildExtension, "build_py": build_py_with_headers},
    python_requires=">=3.9",
    zip_safe=False,
)
