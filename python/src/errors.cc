#include "errors.h"

namespace meshsim::python {
namespace py = pybind11;

namespace {

const char* ClassName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kBadInput:
      return "InputError";
    case ErrorKind::kIo:
      return "IoError";
    case ErrorKind::kInternal:
      return "InternalError";
  }
  return "InternalError";
}

// Sets the Python error for `e` (called with the GIL held, by pybind11's translator).
void SetPythonError(const InputError& e) {
  const py::object cls = py::module_::import("meshsim._errors").attr(ClassName(e.kind));
  const py::object instance =
      cls(e.ToString(), py::arg("file") = e.file, py::arg("line") = e.line,
          py::arg("column") = e.column, py::arg("key") = e.key, py::arg("message") = e.message);
  PyErr_SetObject(cls.ptr(), instance.ptr());
}

}  // namespace

InputError ArgumentError(const std::string& key, const std::string& message) {
  InputError e;
  e.key = key;
  e.message = message;
  return e;
}

void RegisterErrors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Raised& r) {
      SetPythonError(r.error);
    }
  });
}

}  // namespace meshsim::python
