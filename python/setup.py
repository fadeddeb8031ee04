"""pip install --no-build-isolation ./python   (needs PyTorch with CUDA and nvcc)

Builds cuact_torch._C (torch.ops.cuact) with CUDAExtension and installs cuact's headers inside the
package, for cuact_torch.activation's JIT builds. CUACT_TORCH_FAMILY=1 builds the whole
activation family; TORCH_CUDA_ARCH_LIST picks the GPU architectures (e.g. "9.0").
"""
import glob
import os
import shutil

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_HEADERS = os.path.join(HERE, "..", "include", "cuact")
PACKAGE_INCLUDE = os.path.join(HERE, "cuact_torch", "include")

# The headers travel inside the package (an installed cuact_torch has no checkout beside it).
if os.path.isdir(REPO_HEADERS):
    shutil.rmtree(os.path.join(PACKAGE_INCLUDE, "cuact"), ignore_errors=True)
    shutil.copytree(REPO_HEADERS, os.path.join(PACKAGE_INCLUDE, "cuact"))

import sys  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "cuact_torch"))
import _paths  # noqa: E402  (flags shared with the JIT path)

macros = [("CUACT_TORCH_PYMODULE", None)]
if os.environ.get("CUACT_TORCH_FAMILY") == "1":
    macros.append(("CUACT_TORCH_FAMILY", "1"))

setup(
    name="cuact_torch",
    version="0.1.0",
    description="cuact activation kernels as PyTorch custom operators",
    packages=["cuact_torch"],
    package_data={"cuact_torch": ["csrc/*.cu", "csrc/*.h", "include/cuact/*.cuh", "include/cuact/*/*.cuh",
                                  "include/cuact/*/*/*.cuh"]},
    ext_modules=[
        CUDAExtension(
            name="cuact_torch._C",
            # the library and its table's groups (csrc/ops.h): one translation unit each, built
            # in parallel (MAX_JOBS)
            sources=sorted(glob.glob(os.path.join("cuact_torch", "csrc", "*.cu"))),
            include_dirs=[PACKAGE_INCLUDE],
            define_macros=macros,
            extra_compile_args={"cxx": _paths.CXX_FLAGS, "nvcc": _paths.NVCC_FLAGS},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.9",
    zip_safe=False,
)
