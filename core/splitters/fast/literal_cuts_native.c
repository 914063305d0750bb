/* The recursive splitter's cuts at a literal separator in C: core/splitters/fast/literal_cuts.py's literal_bounds.
 *
 * literal_bounds kept the positions of a regex finditer over the region: a match object and a Python step per
 * occurrence, a fifth of a recursive split of Vim's version8.txt (every space of a long paragraph is one). Here
 * the occurrences are found by CPython's own str.find from where the last one ends, which is what finditer
 * meets for a literal (non-overlapping, leftmost first), and only their positions are made.
 *
 * The text is untrusted: the region is clamped to the text as finditer's pos and endpos are, every search
 * starts past the last occurrence (linear in the region), and the list grows by one int per occurrence.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static int append_int(PyObject *list, Py_ssize_t value) {
    PyObject *number = PyLong_FromSsize_t(value);
    if (number == NULL) return -1;
    int failed = PyList_Append(list, number);
    Py_DECREF(number);
    return failed;
}

/* bounds(text, start, end, literal, keep_at_start) -> list[int]: literal_bounds, for 0 <= start <= end <= len(text). */
static PyObject *bounds(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text, *literal;
    Py_ssize_t start, end;
    int keep_at_start;
    if (!PyArg_ParseTuple(args, "UnnUp:bounds", &text, &start, &end, &literal, &keep_at_start)) return NULL;
    Py_ssize_t size = PyUnicode_GET_LENGTH(literal);
    if (size == 0 || start < 0 || start > end || end > PyUnicode_GET_LENGTH(text)) {
        PyErr_SetString(PyExc_ValueError, "bounds(): a non-empty literal and 0 <= start <= end <= len(text)");
        return NULL;
    }
    PyObject *cuts = PyList_New(0);
    if (cuts == NULL) return NULL;
    /* keep_at_start: a cut where each occurrence starts (one at start is the region's own start); else just
     * after each one, then end unless the last occurrence ends there. */
    if (append_int(cuts, start) < 0) goto failed;
    Py_ssize_t position = start, last = -1;
    for (;;) {
        Py_ssize_t found = PyUnicode_Find(text, literal, position, end, 1);
        if (found == -2) goto failed;
        if (found < 0) break;
        last = keep_at_start ? found : found + size;
        if (last != start && append_int(cuts, last) < 0) goto failed;
        position = found + size;
    }
    if ((keep_at_start || last < 0 || last != end) && append_int(cuts, end) < 0) goto failed;
    return cuts;
failed:
    Py_DECREF(cuts);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bounds", bounds, METH_VARARGS,
     "bounds(text, start, end, literal, keep_at_start) -> list[int]: literal_cuts.literal_bounds: start, a cut at\n"
     "each occurrence of literal in text[start:end] (where it starts, or just after it), end; no empty piece."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "literal_cuts_native",
    .m_doc = "The recursive splitter's cuts at a literal separator (core.splitters.fast.literal_cuts), in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_literal_cuts_native(void) { return PyModule_Create(&module); }
