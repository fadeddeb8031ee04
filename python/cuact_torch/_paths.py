"""Where cuact's headers and the operator sources are, for the JIT builds."""
import os

_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def include_dir():
    """cuact's include directory (holding cuact/cuact.cuh and cuact/torch.cuh).

    $CUACT_INCLUDE when set; else the checkout this package sits in (python/cuact_torch ->
    include/); else the copy the wheel carries inside the package.
    """
    candidates = [
        os.environ.get("CUACT_INCLUDE"),
        os.path.join(_PACKAGE, "..", "..", "include"),
        os.path.join(_PACKAGE, "include"),
    ]
    for path in candidates:
        if path and os.path.isfile(os.path.join(path, "cuact", "torch.cuh")):
            return os.path.abspath(path)
    raise RuntimeError(
        "cuact headers not found (looked in $CUACT_INCLUDE, the checkout and the package); "
        "set CUACT_INCLUDE to the include/ directory of cuact")


def csrc(name):
    return os.path.join(_PACKAGE, "csrc", name)


def op_sources():
    """The operator library's translation units (cuact_ops.cu and one per table group)."""
    directory = os.path.join(_PACKAGE, "csrc")
    return sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".cu"))


def header_files():
    """Every cuact header, for content hashes of JIT builds."""
    root = os.path.join(include_dir(), "cuact")
    files = []
    for directory, _, names in os.walk(root):
        files.extend(os.path.join(directory, n) for n in names if n.endswith((".cuh", ".h")))
    return sorted(files)


# nvcc flags of every build. PyTorch adds -D__CUDA_NO_HALF_OPERATORS__ and friends to nvcc
# commands; cuact does its own conversions but undefines them so its headers see CUDA's defaults.
NVCC_FLAGS = [
    "-O3",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
]
CXX_FLAGS = ["-O3"]  # the C++ standard is PyTorch's default (C++17 or later)


def whole_family():
    """The whole activation family is built unless CUACT_TORCH_FAMILY=0 asks for the lean library."""
    return os.environ.get("CUACT_TORCH_FAMILY", "1") != "0"


def family_flags():
    """-DCUACT_TORCH_FAMILY=1 unless the environment asks for the lean library."""
    return ["-DCUACT_TORCH_FAMILY=1"] if whole_family() else []


def version():
    """cuact's version, "MAJOR.MINOR.PATCH", from cuact/version.cuh (the checkout's or the
    package's headers): the one version source."""
    import re
    with open(os.path.join(include_dir(), "cuact", "version.cuh")) as f:
        text = f.read()
    return ".".join(re.search(r"#define\s+CUACT_VERSION_%s\s+(\d+)" % k, text).group(1)
                    for k in ("MAJOR", "MINOR", "PATCH"))
