/* The recursive splitter's cuts at a literal separator in C: core/splitters/fast/literal_cuts.py's literal_bounds.
 *
 * literal_bounds kept the positions of a regex finditer over the region: a match object and a Python step per
 * occurrence, a fifth of a recursive split of Vim's version8.txt (every space of a long paragraph is one). Here
 * the occurrences are found left to right, each search from where the last one ends, which is what finditer
 * meets for a literal (non-overlapping, leftmost first), and only their positions are made.
 *
 * The search reads the text where it is stored (one, two or four bytes a character) a register at a time
 * (SSE2): the positions holding the literal's first character and, its length on, its last one are found
 * together, and only those are compared whole. str.find, called once per occurrence, was slower than the
 * regex on "\n\n" in a text stored two bytes a character.
 *
 * The text is untrusted: callers give 0 <= start <= end <= len(text) (checked), every register read ends by
 * end, and the work is linear in the region: each position is a candidate once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#define HAVE_SSE2 1
#endif

static int append_int(PyObject *list, Py_ssize_t value) {
    PyObject *number = PyLong_FromSsize_t(value);
    if (number == NULL) return -1;
    int failed = PyList_Append(list, number);
    Py_DECREF(number);
    return failed;
}

typedef struct {
    PyObject *cuts;
    Py_ssize_t start, size, last; /* last: the last cut made, -1 before any */
    int keep_at_start;
} Cuts;

/* An occurrence at found: its cut (where it starts, or just after it), one at start being the region's own. */
static int cut_at(Cuts *cuts, Py_ssize_t found) {
    cuts->last = cuts->keep_at_start ? found : found + cuts->size;
    return cuts->last == cuts->start ? 0 : append_int(cuts->cuts, cuts->last);
}

/* The occurrences of needle (size characters, each fitting the text's storage) in text[start:end], each from where
 * the last one ends. One function per storage: the registers compare 16, 8 or 4 characters. */
#define DEFINE_SCAN(NAME, TYPE, LANES, SET1, CMPEQ, LANE_BITS, EVERY_LANE)                                           \
    static int NAME(const TYPE *text, Py_ssize_t end, const TYPE *needle, Cuts *cuts) {                              \
        const Py_ssize_t size = cuts->size, stop = end - size + 1; /* occurrences start before stop */               \
        Py_ssize_t next = cuts->start;                              /* no occurrence may start before next */         \
        Py_ssize_t i = cuts->start;                                                                                 \
        SCAN_BLOCKS(TYPE, LANES, SET1, CMPEQ, LANE_BITS, EVERY_LANE)                                                \
        for (; i < stop; i++) {                                                                                     \
            if (i < next || text[i] != needle[0] || memcmp(text + i, needle, (size_t)size * sizeof(TYPE))) continue; \
            if (cut_at(cuts, i) < 0) return -1;                                                                     \
            next = i + size;                                                                                        \
        }                                                                                                           \
        return 0;                                                                                                   \
    }

#ifdef HAVE_SSE2
/* Blocks of LANES candidates while a block's reads (the first characters, and size - 1 on, the last ones) end
 * by end; each candidate's bit pair (first and last character both there) is checked whole. */
#define SCAN_BLOCKS(TYPE, LANES, SET1, CMPEQ, LANE_BITS, EVERY_LANE)                                                \
    const __m128i first = SET1(needle[0]), final = SET1(needle[size - 1]);                                          \
    for (; i + LANES <= stop; i += LANES) {                                                                         \
        __m128i heads = CMPEQ(_mm_loadu_si128((const __m128i *)(text + i)), first);                                 \
        __m128i tails = CMPEQ(_mm_loadu_si128((const __m128i *)(text + i + size - 1)), final);                      \
        unsigned bits = (unsigned)_mm_movemask_epi8(_mm_and_si128(heads, tails)) & EVERY_LANE;                     \
        while (bits) {                                                                                              \
            Py_ssize_t at = i + __builtin_ctz(bits) / LANE_BITS;                                                    \
            bits &= bits - 1;                                                                                       \
            if (at < next || memcmp(text + at, needle, (size_t)size * sizeof(TYPE))) continue;                      \
            if (cut_at(cuts, at) < 0) return -1;                                                                    \
            next = at + size;                                                                                       \
        }                                                                                                           \
    }
DEFINE_SCAN(scan_ucs1, uint8_t, 16, _mm_set1_epi8, _mm_cmpeq_epi8, 1, 0xFFFFu)
DEFINE_SCAN(scan_ucs2, uint16_t, 8, _mm_set1_epi16, _mm_cmpeq_epi16, 2, 0x5555u)
DEFINE_SCAN(scan_ucs4, uint32_t, 4, _mm_set1_epi32, _mm_cmpeq_epi32, 4, 0x1111u)
#else
#define SCAN_BLOCKS(TYPE, LANES, SET1, CMPEQ, LANE_BITS, EVERY_LANE)
DEFINE_SCAN(scan_ucs1, uint8_t, 16, _, _, 1, 0)
DEFINE_SCAN(scan_ucs2, uint16_t, 8, _, _, 2, 0)
DEFINE_SCAN(scan_ucs4, uint32_t, 4, _, _, 4, 0)
#endif

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
    Cuts cuts = {PyList_New(0), start, size, -1, keep_at_start};
    if (cuts.cuts == NULL) return NULL;
    /* The region's start is always a bound; then a cut per occurrence; then end, unless (keep_at_start off) the
     * last occurrence ends there. */
    if (append_int(cuts.cuts, start) < 0) goto failed;
    int kind = PyUnicode_KIND(text);
    /* A literal with a character wider than the text's storage occurs nowhere in it. */
    if (PyUnicode_KIND(literal) <= kind && size <= end - start) {
        /* The literal in the text's storage, so both are compared as stored. */
        Py_UCS4 *wide = PyUnicode_AsUCS4Copy(literal);
        void *needle = wide == NULL ? NULL : PyMem_Malloc((size_t)size * (size_t)kind);
        if (needle == NULL) {
            PyMem_Free(wide);
            if (!PyErr_Occurred()) PyErr_NoMemory();
            goto failed;
        }
        for (Py_ssize_t i = 0; i < size; i++) PyUnicode_WRITE(kind, needle, i, wide[i]);
        PyMem_Free(wide);
        const void *data = PyUnicode_DATA(text);
        int failed = kind == PyUnicode_1BYTE_KIND   ? scan_ucs1(data, end, needle, &cuts)
                     : kind == PyUnicode_2BYTE_KIND ? scan_ucs2(data, end, needle, &cuts)
                                                    : scan_ucs4(data, end, needle, &cuts);
        PyMem_Free(needle);
        if (failed) goto failed;
    }
    if ((keep_at_start || cuts.last != end) && append_int(cuts.cuts, end) < 0) goto failed;
    return cuts.cuts;
failed:
    Py_DECREF(cuts.cuts);
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
