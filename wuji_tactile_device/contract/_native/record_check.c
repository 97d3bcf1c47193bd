/*
 * The consumer's run check in one compiled call (CPython C API only: no numpy headers).
 *
 * `ForceRecordCodec.check_events` hands over a run of queued data messages; every record must
 * be a `bytes` payload of the layout's size whose structural bytes equal the layout's template
 * and whose forces are all finite float32. The numpy path (`ForceRecordCodec.check_run` over the
 * joined payloads) is the reference: the same records pass and fail (tests/test_record_check.py).
 * Why compiled: the call runs once per `update()`, after the consumer's poll sleep, where each of
 * the numpy path's calls costs 20-30 µs of cold caches whatever its size (docs/performance.md);
 * one short C loop over the records needs no join and touches far less code.
 *
 * Module `_record_check`:
 *   check_run(events, start, count, item, size, template, spans, forces_offset, values) -> bool
 *     events: list of tuples; the payload is item `item` of events[start : start + count].
 *     size: the record size [bytes]; template: a record of the layout (`size` bytes);
 *     spans: the structural byte ranges, native int64 pairs (offset, length);
 *     forces_offset [bytes], values: float32 values from there (3 per taxel).
 *     True when every record passes; False when any does not (or an event is not a tuple, its
 *     payload not `bytes` of `size`): the caller then checks them one by one. ValueError for
 *     arguments that contradict each other (a range outside the record, a count outside events).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "record_check.c reads the records' little-endian float32 as native: little-endian hosts only"
#endif

/* The calling convention's version: records.py refuses a build of another one (a stale
 * extension left by an older `pip install -e .`). Raise it with every change of check_run's
 * arguments or result. */
#define RECORD_CHECK_ABI 1
#define EXPONENT_MASK 0x7F800000u

static PyObject *check_run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 9) {
        PyErr_Format(PyExc_TypeError, "check_run takes 9 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *events = args[0], *template = args[5], *spans = args[6];
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), count = PyLong_AsSsize_t(args[2]);
    Py_ssize_t item = PyLong_AsSsize_t(args[3]), size = PyLong_AsSsize_t(args[4]);
    Py_ssize_t forces_offset = PyLong_AsSsize_t(args[7]), values = PyLong_AsSsize_t(args[8]);
    if (PyErr_Occurred())
        return NULL;
    if (!PyList_CheckExact(events) || !PyBytes_CheckExact(template) || !PyBytes_CheckExact(spans)) {
        PyErr_SetString(PyExc_TypeError, "check_run: events must be a list, template and spans bytes");
        return NULL;
    }
    if (start < 0 || count < 1 || start > PyList_GET_SIZE(events) - count) {
        PyErr_Format(PyExc_ValueError, "check_run: records %zd..%zd outside the %zd events", start,
                     start + count, PyList_GET_SIZE(events));
        return NULL;
    }
    if (item < 0) {
        PyErr_Format(PyExc_ValueError, "check_run: item %zd is not an index of the events' tuples", item);
        return NULL;
    }
    if (size < 1 || PyBytes_GET_SIZE(template) != size) {
        PyErr_Format(PyExc_ValueError, "check_run: template of %zd bytes for records of %zd bytes",
                     PyBytes_GET_SIZE(template), size);
        return NULL;
    }
    if (forces_offset < 0 || values < 0 || forces_offset % 4 != 0 || values > (size - forces_offset) / 4) {
        PyErr_Format(PyExc_ValueError, "check_run: %zd float32 values at byte %zd do not fit a record of %zd bytes",
                     values, forces_offset, size);
        return NULL;
    }
    Py_ssize_t nspan_bytes = PyBytes_GET_SIZE(spans);
    if (nspan_bytes % (2 * (Py_ssize_t)sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "check_run: spans must be int64 (offset, length) pairs");
        return NULL;
    }
    Py_ssize_t nspans = nspan_bytes / (2 * (Py_ssize_t)sizeof(int64_t));
    int64_t span[2];
    const char *span_bytes = PyBytes_AS_STRING(spans);
    for (Py_ssize_t s = 0; s < nspans; s++) {
        memcpy(span, span_bytes + 2 * sizeof(int64_t) * s, sizeof span);
        if (span[0] < 0 || span[1] < 0 || span[0] > size - span[1]) {
            PyErr_Format(PyExc_ValueError, "check_run: structural span (%lld, %lld) outside a record of %zd bytes",
                         (long long)span[0], (long long)span[1], size);
            return NULL;
        }
    }
    const char *expected = PyBytes_AS_STRING(template);
    for (Py_ssize_t r = start; r < start + count; r++) {
        PyObject *event = PyList_GET_ITEM(events, r);
        if (!PyTuple_Check(event) || PyTuple_GET_SIZE(event) <= item)
            Py_RETURN_FALSE;
        PyObject *payload = PyTuple_GET_ITEM(event, item);
        if (!PyBytes_CheckExact(payload) || PyBytes_GET_SIZE(payload) != size)
            Py_RETURN_FALSE;
        const char *record = PyBytes_AS_STRING(payload);
        for (Py_ssize_t s = 0; s < nspans; s++) {
            memcpy(span, span_bytes + 2 * sizeof(int64_t) * s, sizeof span);
            if (memcmp(record + span[0], expected + span[0], (size_t)span[1]) != 0)
                Py_RETURN_FALSE;
        }
        /* finite float32 <=> exponent bits not all ones; OR-reduce "all ones" over the record */
        const char *forces = record + forces_offset;
        uint32_t bad = 0, word;
        for (Py_ssize_t v = 0; v < values; v++) {
            memcpy(&word, forces + 4 * v, 4);
            bad |= (uint32_t)((word & EXPONENT_MASK) == EXPONENT_MASK);
        }
        if (bad)
            Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"check_run", (PyCFunction)(void (*)(void))check_run, METH_FASTCALL,
     "check_run(events, start, count, item, size, template, spans, forces_offset, values) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_record_check",
    "The consumer's run check of force records (see record_check.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__record_check(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", RECORD_CHECK_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
