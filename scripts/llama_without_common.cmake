# Read at the end of llama.cpp's project() while llama-cpp-python compiles: setup.sh passes
# -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file>. llama-cpp-python forces LLAMA_BUILD_COMMON
# on as a cache entry; a normal variable of the same name hides it in llama.cpp's folder,
# so llama.cpp's `common` helpers (code of its command-line programs, which the Python
# bindings never load) are not compiled: they were the largest part of the compile
# (docs/benchmarks/llama-build.md).
set(LLAMA_BUILD_COMMON OFF)
