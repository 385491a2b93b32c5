/*
 * kernelindex_sdk._canonical_scan: the canonical form's short scan, in C.
 *
 * scan_values(obj, floats) answers exactly as kernelindex_sdk.canonical._scan_values
 * (its twin, the definition): whether an exact dict or list holds only values the
 * orjson path may write itself, appending to the list `floats` each float that JCS
 * does not write as repr (integral, |x| < 1e-4, |x| >= 1e16, NaN, infinities).
 *
 *   - dict and list (exact types) are walked, a dict's values only: orjson refuses
 *     keys that are not exact str itself (verified at import in canonical.py);
 *   - str, int, bool (exact types) and None pass; ints are not range-checked here
 *     (orjson's OPT_STRICT_INTEGER refuses those beyond 2**53 - 1);
 *   - a float (exact) passes, and is appended when outside the rule;
 *   - anything else (a subclass, a tuple, any other object) answers False.
 *
 * No Python code runs during the walk (no method is called on any value), so nothing
 * can change a container while it is walked. Nesting beyond the interpreter's limit,
 * or a cycle, raises RecursionError as the twin does. tests/test_canonical.py holds the
 * two to each other on drawn values, in process and through the CLI; canonical.py also
 * compares them on a probe at import and uses this module only if they agree.
 *
 * SCAN_VERSION names these semantics: canonical.py uses a build whose version is not
 * the one it expects (an old in-place build of an editable install) as if it were
 * absent.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#define SCAN_VERSION 1

static int walk(PyObject *container, PyObject *floats);

/* 1: the value passes; 0: it does not; -1: an exception is set. */
static int
scan_value(PyObject *value, PyObject *floats)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type || type == &PyLong_Type || type == &PyBool_Type
        || value == Py_None) {
        return 1;
    }
    if (type == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(value);
        double magnitude = fabs(x);
        /* float.is_integer(), or outside 1e-4 <= |x| < 1e16 (NaN fails the range
           test; an infinity is equal to its floor, as is_integer is not, but both
           are appended either way). */
        if (x == floor(x) || !(magnitude >= 1e-4 && magnitude < 1e16)) {
            if (PyList_Append(floats, value) < 0) {
                return -1;
            }
        }
        return 1;
    }
    if (type == &PyDict_Type || type == &PyList_Type) {
        return walk(value, floats);
    }
    return 0;
}

static int
walk(PyObject *container, PyObject *floats)
{
    int verdict = 1;
    if (Py_EnterRecursiveCall(" while scanning a value for its canonical form")) {
        return -1;
    }
    if (Py_TYPE(container) == &PyDict_Type) {
        Py_ssize_t position = 0;
        PyObject *key, *value;
        while (verdict == 1 && PyDict_Next(container, &position, &key, &value)) {
            verdict = scan_value(value, floats);
        }
    }
    else {
        for (Py_ssize_t i = 0; verdict == 1 && i < PyList_GET_SIZE(container); i++) {
            verdict = scan_value(PyList_GET_ITEM(container, i), floats);
        }
    }
    Py_LeaveRecursiveCall();
    return verdict;
}

static PyObject *
scan_values(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scan_values() takes a value and a list");
        return NULL;
    }
    PyObject *container = args[0], *floats = args[1];
    if (!PyList_CheckExact(floats)) {
        PyErr_SetString(PyExc_TypeError, "scan_values(): floats must be a list");
        return NULL;
    }
    if (Py_TYPE(container) != &PyDict_Type && Py_TYPE(container) != &PyList_Type) {
        PyErr_SetString(PyExc_TypeError, "scan_values() walks an exact dict or list");
        return NULL;
    }
    int verdict = walk(container, floats);
    if (verdict < 0) {
        return NULL;
    }
    return PyBool_FromLong(verdict);
}

static PyMethodDef scan_methods[] = {
    {"scan_values", (PyCFunction)(void (*)(void))scan_values, METH_FASTCALL,
     "scan_values(obj, floats) -> bool: canonical._scan_values, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT,
    "_canonical_scan",
    "The canonical form's short scan, in C (canonical._scan_values' twin).",
    -1,
    scan_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC
PyInit__canonical_scan(void)
{
    PyObject *module = PyModule_Create(&scan_module);
    if (module != NULL && PyModule_AddIntConstant(module, "SCAN_VERSION", SCAN_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
