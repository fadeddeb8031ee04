# Included before project(): finds nvcc where NVIDIA's installers put it when it is not on PATH.
#
# NVIDIA's packages install the toolkit under /usr/local/cuda (a link to /usr/local/cuda-X.Y) and
# leave PATH alone; CMake 3.25 then fails with "Failed to detect a default CUDA architecture",
# which does not say that nvcc was not found. An explicit CMAKE_CUDA_COMPILER, the CUDACXX
# environment variable or an nvcc on PATH always wins over this.
if(DEFINED CMAKE_CUDA_COMPILER OR DEFINED ENV{CUDACXX})
  return()
endif()
find_program(CUACT_NVCC_ON_PATH nvcc NO_CACHE)
if(CUACT_NVCC_ON_PATH)
  return()
endif()
file(GLOB _cuact_versioned_nvcc /usr/local/cuda-*/bin/nvcc)
list(SORT _cuact_versioned_nvcc COMPARE NATURAL ORDER DESCENDING)
foreach(_cuact_nvcc /usr/local/cuda/bin/nvcc ${_cuact_versioned_nvcc})
  if(EXISTS "${_cuact_nvcc}")
    message(STATUS "cuact: nvcc is not on PATH; using ${_cuact_nvcc}")
    set(CMAKE_CUDA_COMPILER "${_cuact_nvcc}" CACHE FILEPATH "CUDA compiler")
    break()
  endif()
endforeach()
if(NOT DEFINED CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR
    "cuact: no CUDA compiler: nvcc is neither on PATH nor in /usr/local/cuda/bin. Install the CUDA "
    "Toolkit 12.x or 13.x (https://developer.nvidia.com/cuda-downloads), or point CMake at nvcc "
    "with -DCMAKE_CUDA_COMPILER=/path/to/nvcc or the CUDACXX environment variable.")
endif()
unset(_cuact_versioned_nvcc)
unset(_cuact_nvcc)
