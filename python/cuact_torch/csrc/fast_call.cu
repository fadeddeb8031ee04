// The eager fast path of cuact_torch.functional: `_C._call(index, x, *params)` runs the forward
// or in-place op registered by `_C._fast_op` through its typed dispatcher handle. A call through
// torch.ops goes through the boxed interpreter path (a stack of IValues, the arguments matched
// against the schema); this one unpacks the tensor and the doubles and calls the op's unboxed
// kernels, so autograd, the version counter and dispatch modes act as for torch.ops. Anything
// else than a plain Tensor (subclasses, DTensor, a non-tensor), and any call under a torch
// function mode, goes to the op's OpOverload, which handles them.
// Only the setup.py build (a Python module) has it; the JIT build has no module to hang it on.
#ifdef CUACT_TORCH_PYMODULE
#include <Python.h>  // first, as Python asks

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <cuact/torch.cuh>

namespace {

using at::Tensor;

// The most double parameters a fast op may take (the family's take two at most).
constexpr int max_fast_doubles = 3;

// One registered op: its kind, its typed handle (type-erased) and the caller for that type.
struct fast_op {
  int doubles = 0;
  bool inplace = false;
  PyObject* fallback = nullptr;  // the op's OpOverload (a strong reference, kept for good)
  std::shared_ptr<void> typed;  // a c10::TypedOperatorHandle<Signature>
  PyObject* (*call)(const fast_op&, PyObject* x, const double* p) = nullptr;
};

// The registered ops: appended under the lock at import, read by index without it. An index is
// handed out only after its entry is in place (published), and entries never move.
constexpr std::size_t max_fast_ops = 512;
std::unique_ptr<fast_op> registered[max_fast_ops];
std::atomic<std::size_t> published{0};
std::mutex& fast_ops_lock() {
  static std::mutex lock;
  return lock;
}

template <class Signature>
const c10::TypedOperatorHandle<Signature>& typed_of(const fast_op& op) {
  return *static_cast<const c10::TypedOperatorHandle<Signature>*>(op.typed.get());
}

// Releases the GIL for the op's dispatch, as torch's own bindings do, and takes it back when the
// scope ends (also when the op throws: the exception is translated with the GIL held).
struct without_gil {
  PyThreadState* state = PyEval_SaveThread();
  ~without_gil() { PyEval_RestoreThread(state); }
};

template <std::size_t... I>
PyObject* call_forward(const fast_op& op, PyObject* x, const double* p, std::index_sequence<I...>) {
  using signature = typename cuact::torch_ops::with_doubles<Tensor(const Tensor&), sizeof...(I)>::type;
  const Tensor& self = THPVariable_Unpack(x);
  Tensor y;
  {
    const without_gil released;
    y = typed_of<signature>(op).call(self, p[I]...);
  }
  return THPVariable_Wrap(std::move(y));
}

template <std::size_t... I>
PyObject* call_inplace(const fast_op& op, PyObject* x, const double* p, std::index_sequence<I...>) {
  using signature = typename cuact::torch_ops::with_doubles<void(Tensor&), sizeof...(I)>::type;
  Tensor self = THPVariable_Unpack(x);
  {
    const without_gil released;
    typed_of<signature>(op).call(self, p[I]...);
  }
  Py_INCREF(x);
  return x;
}

template <int N>
void bind(fast_op& op, const c10::OperatorHandle& handle) {
  if (op.inplace) {
    using signature = typename cuact::torch_ops::with_doubles<void(Tensor&), N>::type;
    op.typed = std::make_shared<c10::TypedOperatorHandle<signature>>(handle.typed<signature>());
    op.call = [](const fast_op& o, PyObject* x, const double* p) {
      return call_inplace(o, x, p, std::make_index_sequence<N>{});
    };
  } else {
    using signature = typename cuact::torch_ops::with_doubles<Tensor(const Tensor&), N>::type;
    op.typed = std::make_shared<c10::TypedOperatorHandle<signature>>(handle.typed<signature>());
    op.call = [](const fast_op& o, PyObject* x, const double* p) {
      return call_forward(o, x, p, std::make_index_sequence<N>{});
    };
  }
}

// _C._fast_op(name: str, doubles: int, inplace: bool, overload) -> int: the index of op `name`
// ("cuact::silu"; its default overload, `overload` in Python) for _call. Raises RuntimeError where
// the op does not exist or its schema is not (Tensor, float * doubles) -> Tensor (-> () in place).
PyObject* register_fast_op(PyObject*, PyObject* args) {
  HANDLE_TH_ERRORS
  const char* name = nullptr;
  int doubles = 0;
  int inplace = 0;
  PyObject* overload = nullptr;
  if (!PyArg_ParseTuple(args, "sipO", &name, &doubles, &inplace, &overload)) return nullptr;
  TORCH_CHECK(doubles >= 0 && doubles <= max_fast_doubles, "cuact_torch._C._fast_op: ", name,
              " takes ", doubles, " parameters; at most ", max_fast_doubles, " are supported");
  const auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
  auto op = std::make_unique<fast_op>();
  op->doubles = doubles;
  op->inplace = inplace != 0;
  Py_INCREF(overload);
  op->fallback = overload;
  switch (doubles) {  // typed<>() checks the signature against the registered kernels' types
    case 0: bind<0>(*op, handle); break;
    case 1: bind<1>(*op, handle); break;
    case 2: bind<2>(*op, handle); break;
    default: bind<3>(*op, handle); break;
  }
  const std::lock_guard<std::mutex> lock(fast_ops_lock());
  const std::size_t index = published.load(std::memory_order_relaxed);
  TORCH_CHECK(index < max_fast_ops, "cuact_torch._C._fast_op: more than ", max_fast_ops, " ops");
  registered[index] = std::move(op);
  published.store(index + 1, std::memory_order_release);
  return PyLong_FromSize_t(index);
  END_HANDLE_TH_ERRORS
}

// _C._call(index, x, *params): the op at `index` on tensor x; its OpOverload's call where x is not
// a plain Tensor or a torch function mode is active.
PyObject* fast_call(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  HANDLE_TH_ERRORS
  if (nargs < 2) {
    PyErr_SetString(PyExc_TypeError, "cuact_torch._C._call(index, x, *params)");
    return nullptr;
  }
  const Py_ssize_t index = PyLong_AsSsize_t(args[0]);
  if (index == -1 && PyErr_Occurred()) return nullptr;
  if (index < 0 || static_cast<std::size_t>(index) >= published.load(std::memory_order_acquire)) {
    PyErr_SetString(PyExc_IndexError, "cuact_torch._C._call: no op with that index");
    return nullptr;
  }
  const fast_op& op = *registered[static_cast<std::size_t>(index)];
  PyObject* x = args[1];
  // a Tensor (or Parameter) and no torch function mode: what torch.ops would not redirect
  if (!THPVariable_CheckExact(x) || at::impl::torch_function_mode_enabled()) {
    return PyObject_Vectorcall(op.fallback, args + 1, static_cast<std::size_t>(nargs - 1), nullptr);
  }
  if (nargs - 2 != op.doubles) {
    PyErr_Format(PyExc_TypeError, "cuact_torch._C._call: the op takes %d parameters, got %zd",
                 op.doubles, nargs - 2);
    return nullptr;
  }
  double p[max_fast_doubles] = {};
  for (int i = 0; i < op.doubles; ++i) {
    p[i] = PyFloat_AsDouble(args[2 + i]);
    if (p[i] == -1.0 && PyErr_Occurred()) return nullptr;
  }
  return op.call(op, x, p);
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"_fast_op", register_fast_op, METH_VARARGS,
     "_fast_op(name, doubles, inplace) -> int: an op's index for _call"},
    {"_call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_call)), METH_FASTCALL,
     "_call(index, x, *params): the op at index on x"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

// The module's methods (cuact_ops.cu: PyInit__C).
PyMethodDef* cuact_fast_call_methods() { return methods; }
#endif
