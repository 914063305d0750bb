/* Spans to nodes in C: core/splitters/nodes.py's build_nodes loop for a document without pages or tables.
 *
 * Every splitter's cuts become nodes in that loop, and on 1,000-character chunks it was most of a split's
 * time (~1.5 us a node in Python, against LangChain's ~3 us for a whole chunk). Here each node is made of
 * the same parts, in the same order, and the Node is built by calling the Node class with the same twelve
 * positional arguments, so its own __init__ runs as before.
 *
 * A node's text is the document's text[start:end], stored as narrowly as its characters allow (a str must
 * be). CPython's slice of a text stored two bytes a character finds the slice's widest character, then
 * narrows it a character at a time; here sixteen at a time (SSE2) where the slice turns out ASCII or Latin-1:
 * a mostly-ASCII file holding one curly quote is stored two bytes a character whole.
 *
 * What this does not do, it leaves to Python by returning None: a span that is not a tuple of two ints
 * within the text (Python's slicing rules), a span carrying metadata of its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

/* text[start:end] of a text stored two bytes a character, stored as narrowly as its widest character allows. */
static PyObject *ucs2_slice(const uint16_t *from, Py_ssize_t length) {
    uint16_t bits_set = 0;  /* the OR of the characters */
    Py_ssize_t i = 0;
#ifdef HAVE_SSE2
    __m128i ored = _mm_setzero_si128();
    for (; i + 8 <= length; i += 8) ored = _mm_or_si128(ored, _mm_loadu_si128((const __m128i *)(from + i)));
    uint16_t lanes[8];
    _mm_storeu_si128((__m128i *)lanes, ored);
    for (int lane = 0; lane < 8; lane++) bits_set |= lanes[lane];
#endif
    for (; i < length; i++) bits_set |= from[i];
    /* The OR of the characters is under 0x80 (0x100) exactly when every character is. */
    if (bits_set >= 0x100) { /* stays two bytes a character: a copy */
        PyObject *slice = PyUnicode_New(length, 0xFFFF);
        if (slice != NULL) memcpy(PyUnicode_DATA(slice), from, (size_t)length * 2);
        return slice;
    }
    PyObject *slice = PyUnicode_New(length, bits_set >= 0x80 ? 0xFF : 0x7F);
    if (slice == NULL) return NULL;
    uint8_t *to = PyUnicode_DATA(slice);
    i = 0;
#ifdef HAVE_SSE2
    for (; i + 16 <= length; i += 16) {
        __m128i low = _mm_loadu_si128((const __m128i *)(from + i)), high = _mm_loadu_si128((const __m128i *)(from + i + 8));
        _mm_storeu_si128((__m128i *)(to + i), _mm_packus_epi16(low, high)); /* every unit under 0x100: no saturation */
    }
#endif
    for (; i < length; i++) to[i] = (uint8_t)from[i];
    return slice;
}

static PyObject *slice_of(PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    if (PyUnicode_KIND(text) == PyUnicode_2BYTE_KIND && end - start > 0)
        return ucs2_slice((const uint16_t *)PyUnicode_DATA(text) + start, end - start);
    return PyUnicode_Substring(text, start, end);
}

/* 1 with the span's start and end (borrowed) and their values; 0 where Python's loop must take the spans; -1 on
 * an error. */
static int plain_span(PyObject *span, Py_ssize_t text_length, PyObject **start, PyObject **end, Py_ssize_t *from,
                      Py_ssize_t *to) {
    if (!PyTuple_Check(span) || PyTuple_GET_SIZE(span) < 2) return 0;
    if (PyTuple_GET_SIZE(span) > 2) {
        int own_metadata = PyObject_IsTrue(PyTuple_GET_ITEM(span, 2));
        if (own_metadata < 0) return -1;
        if (own_metadata) return 0;
    }
    *start = PyTuple_GET_ITEM(span, 0);
    *end = PyTuple_GET_ITEM(span, 1);
    if (!PyLong_CheckExact(*start) || !PyLong_CheckExact(*end)) return 0;
    *from = PyLong_AsSsize_t(*start);
    *to = PyLong_AsSsize_t(*end);
    if ((*from == -1 || *to == -1) && PyErr_Occurred()) {
        PyErr_Clear(); /* too large for an index: Python's slicing rules */
        return 0;
    }
    return 0 <= *from && *from <= *to && *to <= text_length;
}

static PyObject *relationships(int prev_next, PyObject *keys[3], PyObject *doc_id, PyObject *before, PyObject *after) {
    PyObject *links = PyDict_New();
    if (links == NULL) return NULL;
    if (PyDict_SetItem(links, keys[0], doc_id) < 0 || (prev_next && before != NULL && PyDict_SetItem(links, keys[1], before) < 0) ||
        (prev_next && after != NULL && PyDict_SetItem(links, keys[2], after) < 0)) {
        Py_DECREF(links);
        return NULL;
    }
    return links;
}

/* build(node_class, text, doc_id, id_stem, spans, metadata, llm_keys, embed_keys, metadata_template,
 *       metadata_separator, text_template, prev_next, source, previous, next) -> list | None */
static PyObject *build(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 15) {
        PyErr_SetString(PyExc_TypeError, "build() takes 15 arguments");
        return NULL;
    }
    PyObject *node_class = args[0], *text = args[1], *doc_id = args[2], *id_stem = args[3], *metadata = args[5];
    PyObject *llm_keys = args[6], *embed_keys = args[7];
    PyObject *keys[3] = {args[12], args[13], args[14]};
    if (!PyUnicode_Check(text) || !PyUnicode_Check(id_stem) || !PyDict_Check(metadata) || !PyList_Check(llm_keys) ||
        !PyList_Check(embed_keys)) {
        PyErr_SetString(PyExc_TypeError, "build(): text and id_stem str, metadata a dict, the keys lists");
        return NULL;
    }
    int prev_next = PyObject_IsTrue(args[11]);
    if (prev_next < 0) return NULL;
    PyObject *spans = PySequence_Fast(args[4], "build(): spans must be a sequence");
    if (spans == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(spans), text_length = PyUnicode_GET_LENGTH(text);
    PyObject **items = PySequence_Fast_ITEMS(spans);
    PyObject *nodes = PyList_New(count);
    PyObject *before = NULL, *node_id = count ? PyUnicode_FromFormat("%U0", id_stem) : NULL, *after = NULL;
    if (nodes == NULL || (count && node_id == NULL)) goto failed;
    for (Py_ssize_t index = 1; index <= count; index++) {
        PyObject *start = NULL, *end = NULL;
        Py_ssize_t from = 0, to = 0;
        int plain = plain_span(items[index - 1], text_length, &start, &end, &from, &to);
        if (plain <= 0) {
            if (plain < 0) goto failed;
            Py_CLEAR(nodes); /* Python's loop takes them all */
            goto done;
        }
        after = index < count ? PyUnicode_FromFormat("%U%zd", id_stem, index) : NULL;
        if (index < count && after == NULL) goto failed;
        PyObject *call[12] = {slice_of(text, from, to), node_id, PyDict_Copy(metadata), PyList_GetSlice(llm_keys, 0, PY_SSIZE_T_MAX),
                              PyList_GetSlice(embed_keys, 0, PY_SSIZE_T_MAX), args[8], args[9], args[10],
                              relationships(prev_next, keys, doc_id, before, after), doc_id, start, end};
        PyObject *node = NULL;
        if (call[0] && call[2] && call[3] && call[4] && call[8]) node = PyObject_Vectorcall(node_class, call, 12, NULL);
        Py_XDECREF(call[0]);
        Py_XDECREF(call[2]);
        Py_XDECREF(call[3]);
        Py_XDECREF(call[4]);
        Py_XDECREF(call[8]);
        if (node == NULL) goto failed;
        PyList_SET_ITEM(nodes, index - 1, node);
        Py_XSETREF(before, node_id);
        node_id = after;
        after = NULL;
    }
done:
    Py_XDECREF(before);
    Py_XDECREF(node_id);
    Py_XDECREF(after);
    Py_DECREF(spans);
    if (nodes == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return nodes;
failed:
    Py_CLEAR(nodes);
    goto done;
}

static PyMethodDef methods[] = {
    {"build", (PyCFunction)(void (*)(void))build, METH_FASTCALL,
     "build(node_class, text, doc_id, id_stem, spans, metadata, llm_keys, embed_keys, metadata_template,\n"
     "metadata_separator, text_template, prev_next, source, previous, next) -> list[Node] | None:\n"
     "core.splitters.nodes.build_nodes for a document without pages or tables; None where a span needs\n"
     "Python's loop (not a tuple of two ints within the text, or carrying metadata)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "nodes_native",
    .m_doc = "Spans to nodes (core.splitters.nodes.build_nodes), in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_nodes_native(void) { return PyModule_Create(&module); }
