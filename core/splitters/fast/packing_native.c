/* Greedy packing by bisection in C: core/splitters/fast/packing.py's merge_bounds, step for step.
 *
 * merge_bounds takes each chunk's last piece by bisection over running sums, trims the chunk's whitespace and
 * finds the next chunk's first piece by bisection again: a dozen Python steps a chunk, a third of a recursive
 * split of Vim's version8.txt. Here the bounds and sums are read into C arrays once and the same steps run on
 * them; each chunk is a Span made as packing.py makes it (the tuple subclass's own allocation, no __new__).
 *
 * What this does not do, it leaves to Python by returning None: sums that are not ints within the index range
 * (a caller's size function may count in floats), sizes past a quarter of it, or bounds outside the text.
 *
 * The text is untrusted: every character read is inside it (the bounds are checked against its length first),
 * and the work is that of the Python loop: two bisections and the trimmed whitespace per chunk.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The ints of a sequence, or NULL: -1 where one is not an int within range (no error set), -2 on an error. */
static Py_ssize_t *read_ints(PyObject *sequence, Py_ssize_t *count, int *why) {
    PyObject *fast = PySequence_Fast(sequence, "merge(): bounds and prefix must be sequences");
    if (fast == NULL) {
        *why = -2;
        return NULL;
    }
    *count = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    Py_ssize_t *values = PyMem_Malloc((size_t)(*count ? *count : 1) * sizeof(Py_ssize_t));
    if (values == NULL) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        *why = -2;
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *count; i++) {
        int overflow = 0;
        values[i] = PyLong_CheckExact(items[i]) ? PyLong_AsLongLongAndOverflow(items[i], &overflow) : 0;
        if (!PyLong_CheckExact(items[i]) || overflow || values[i] > PY_SSIZE_T_MAX / 4 || values[i] < -PY_SSIZE_T_MAX / 4) {
            PyMem_Free(values);
            Py_DECREF(fast);
            *why = -1;
            return NULL;
        }
    }
    Py_DECREF(fast);
    return values;
}

/* bisect.bisect_right(a, x, lo, hi) */
static Py_ssize_t bisect_right(const Py_ssize_t *a, Py_ssize_t x, Py_ssize_t lo, Py_ssize_t hi) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* bisect.bisect_left(a, x, lo, hi) */
static Py_ssize_t bisect_left(const Py_ssize_t *a, Py_ssize_t x, Py_ssize_t lo, Py_ssize_t hi) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static PyObject *new_span(PyTypeObject *span_type, Py_ssize_t start, Py_ssize_t end) {
    PyObject *span = span_type->tp_alloc(span_type, 3), *first = PyLong_FromSsize_t(start), *last = PyLong_FromSsize_t(end);
    if (span == NULL || first == NULL || last == NULL) {
        Py_XDECREF(span);
        Py_XDECREF(first);
        Py_XDECREF(last);
        return NULL;
    }
    PyTuple_SET_ITEM(span, 0, first);
    PyTuple_SET_ITEM(span, 1, last);
    Py_INCREF(Py_None);
    PyTuple_SET_ITEM(span, 2, Py_None);
    return span;
}

/* merge(span_type, bounds, prefix, chunk_size, chunk_overlap, text) -> list[Span] | None */
static PyObject *merge(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *span_object, *bounds_object, *prefix_object, *size_object, *overlap_object, *text;
    if (!PyArg_ParseTuple(args, "O!OOOOU:merge", &PyType_Type, &span_object, &bounds_object, &prefix_object,
                          &size_object, &overlap_object, &text))
        return NULL;
    PyTypeObject *span_type = (PyTypeObject *)span_object;
    if (!PyType_IsSubtype(span_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "merge(): span_type must be a tuple subclass");
        return NULL;
    }
    int overflow = 0;
    long long chunk_size = PyLong_CheckExact(size_object) ? PyLong_AsLongLongAndOverflow(size_object, &overflow) : -1;
    long long chunk_overlap =
        PyLong_CheckExact(overlap_object) && !overflow ? PyLong_AsLongLongAndOverflow(overlap_object, &overflow) : -1;
    if (PyErr_Occurred()) return NULL;
    const long long huge = PY_SSIZE_T_MAX / 4;
    if (overflow || chunk_size < 0 || chunk_size > huge || chunk_overlap < 0 || chunk_overlap > huge) Py_RETURN_NONE;

    Py_ssize_t bound_count = 0, prefix_count = 0;
    int why = 0;
    Py_ssize_t *bounds = read_ints(bounds_object, &bound_count, &why);
    if (bounds == NULL) {
        if (why == -2) return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t *prefix = prefix_object == bounds_object ? bounds : read_ints(prefix_object, &prefix_count, &why);
    if (prefix == bounds) prefix_count = bound_count;
    PyObject *spans = NULL;
    if (prefix == NULL) {
        PyMem_Free(bounds);
        if (why == -2) return NULL;
        Py_RETURN_NONE;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), n = bound_count - 1;
    int in_text = prefix_count >= bound_count;
    for (Py_ssize_t i = 0; i < bound_count && in_text; i++) in_text = 0 <= bounds[i] && bounds[i] <= length;
    if (!in_text) goto done; /* None: Python's loop and its rules */
    spans = PyList_New(0);
    if (spans == NULL) goto done;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t first = 0, previous_end = -1;
    while (first < n) {
        Py_ssize_t last = bisect_right(prefix, prefix[first] + (Py_ssize_t)chunk_size, first + 1, n + 1) - 2;
        if (last < first) last = first;
        Py_ssize_t start = bounds[first], end = bounds[last + 1];
        while (start < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start))) start++;
        while (end > start && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1))) end--;
        if (start < end && end > previous_end) {
            PyObject *span = new_span(span_type, start, end);
            if (span == NULL || PyList_Append(spans, span) < 0) {
                Py_XDECREF(span);
                Py_CLEAR(spans);
                goto done;
            }
            Py_DECREF(span);
            previous_end = end;
        }
        if (last + 1 >= n) break;
        /* The next chunk's first piece: the smallest j keeping the overlap and the room for piece last + 1. */
        Py_ssize_t carried = prefix[last + 1] - (Py_ssize_t)chunk_overlap, room = prefix[last + 2] - (Py_ssize_t)chunk_size;
        first = bisect_left(prefix, carried > room ? carried : room, first + 1, last + 1);
    }
done:
    if (prefix != bounds) PyMem_Free(prefix);
    PyMem_Free(bounds);
    if (spans == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return spans;
}

static PyMethodDef methods[] = {
    {"merge", merge, METH_VARARGS,
     "merge(span_type, bounds, prefix, chunk_size, chunk_overlap, text) -> list[Span] | None: packing.merge_bounds,\n"
     "or None where its inputs need Python (sums that are not ints, bounds outside the text)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "packing_native",
    .m_doc = "Greedy packing by bisection over running sums (core.splitters.fast.packing.merge_bounds), in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_packing_native(void) { return PyModule_Create(&module); }
