/* The character splitter's search path in C: core/splitters/fast/separator_search.py's bounds_by_search,
 * step for step, for the common case.
 *
 * The search does a few str.find/rfind calls per chunk and a dozen comparisons around them; in Python the
 * comparisons cost more than the searches (two fifths of a character split on 1,000-character chunks,
 * benchmarks/NOTES.md). Here the same steps call CPython's own find (PyUnicode_Find, with str.find's index
 * rules) and read characters where they are stored.
 *
 * What this does not do, it leaves to Python by returning None: a chain of overlapping separator occurrences
 * longer than the walk limit (where separator_search.py scans the chunk's region, or hands the text to the
 * rule). tests/test_character_fast_path.py holds both paths to the rule's spans.
 *
 * The text is untrusted: every index read is inside it (each read below states why), and the work is that of
 * the Python search: a bounded number of finds per chunk, each from the chunk's own region.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Separators overlap themselves at fewer shifts than their length; longer profiles go to Python. */
#define MAX_SHIFTS 128

typedef struct {
    PyObject *text, *separator;
    int kind;
    const void *data;
    Py_ssize_t length, size;
    Py_ssize_t shifts[MAX_SHIFTS];
    Py_ssize_t shift_count;
    PyObject *overlap_tails;
    Py_ssize_t walk_limit;
} Search;

/* str.find / str.rfind (direction 1 / -1) of the separator in text[start:end], str's index rules; -2 on error. */
static inline Py_ssize_t find(const Search *s, Py_ssize_t start, Py_ssize_t end, int direction) {
    return PyUnicode_Find(s->text, s->separator, start, end, direction);
}

static inline int is_space_at(const Search *s, Py_ssize_t i) {
    return Py_UNICODE_ISSPACE(PyUnicode_READ(s->kind, s->data, i));
}

/* The outcome of a walk: an index, or one of these. */
#define DENSE_RUN (-3)
#define FAILED (-2)

/* separator_search._chain_start: the first of the occurrences overlapping one another back from the one at j. */
static Py_ssize_t chain_start(const Search *s, Py_ssize_t j, Py_ssize_t start) {
    for (Py_ssize_t step = 0; step < s->walk_limit; step++) {
        int moved = 0;
        for (Py_ssize_t i = s->shift_count - 1; i >= 0; i--) { /* the furthest overlapping occurrence first */
            Py_ssize_t k = s->shifts[i];
            if (j - k < start) continue;
            Py_ssize_t matched = PyUnicode_Tailmatch(s->text, s->separator, j - k, PY_SSIZE_T_MAX, -1);
            if (matched < 0) return FAILED;
            if (matched) {
                j -= k;
                moved = 1;
                break;
            }
        }
        if (!moved) return j;
    }
    return DENSE_RUN;
}

/* separator_search._last_aligned: the last occurrence a scan from the one at first meets before stop. */
static Py_ssize_t last_aligned(const Search *s, Py_ssize_t first, Py_ssize_t stop) {
    Py_ssize_t last = first, j = first;
    for (Py_ssize_t step = 0; step < s->walk_limit; step++) {
        if (j == FAILED) return FAILED;
        if (j < 0) return last;
        last = j;
        j = find(s, j + s->size, stop, 1);
    }
    return DENSE_RUN;
}

/* separator_search._first_aligned: the first occurrence a scan from the one at first meets that ends in [floor, stop). */
static Py_ssize_t first_aligned(const Search *s, Py_ssize_t first, Py_ssize_t floor, Py_ssize_t stop) {
    Py_ssize_t j = first;
    for (Py_ssize_t step = 0; step < s->walk_limit; step++) {
        if (j == FAILED || j < 0 || j + s->size >= floor) return j;
        j = find(s, j + s->size, stop - 1, 1);
    }
    return DENSE_RUN;
}

/* Whether the character before j (j > 0) may end an occurrence that overlaps the one at j from the left. */
static inline int may_overlap(const Search *s, Py_ssize_t j) {
    Py_UCS4 before = PyUnicode_READ(s->kind, s->data, j - 1);
    return PyUnicode_FindChar(s->overlap_tails, before, 0, PyUnicode_GET_LENGTH(s->overlap_tails), 1) >= 0;
}

static int add(PyObject *chunks, Py_ssize_t start, Py_ssize_t end) {
    PyObject *pair = Py_BuildValue("(nn)", start, end);
    if (pair == NULL) return -1;
    int failed = PyList_Append(chunks, pair);
    Py_DECREF(pair);
    return failed;
}

/* bounds(text, separator, chunk_size, chunk_overlap, shifts, overlap_tails, widest_shift, trailing_space,
 * walk_limit): separator_search.bounds_by_search's list of (start, end), or None where a walk meets a dense run. */
static PyObject *bounds(PyObject *module, PyObject *args) {
    (void)module;
    Search s;
    Py_ssize_t chunk_size, chunk_overlap, widest_shift, trailing_space;
    PyObject *shifts;
    if (!PyArg_ParseTuple(args, "UUnnO!Unnn:bounds", &s.text, &s.separator, &chunk_size, &chunk_overlap, &PyTuple_Type,
                          &shifts, &s.overlap_tails, &widest_shift, &trailing_space, &s.walk_limit))
        return NULL;
    s.length = PyUnicode_GET_LENGTH(s.text);
    s.size = PyUnicode_GET_LENGTH(s.separator);
    s.kind = PyUnicode_KIND(s.text);
    s.data = PyUnicode_DATA(s.text);
    s.shift_count = PyTuple_GET_SIZE(shifts);
    /* Sizes past a quarter of the index range (no text is that long) would make the arithmetic below overflow. */
    const Py_ssize_t huge = PY_SSIZE_T_MAX / 4;
    /* trailing_space is 0 or the separator's length (a whitespace separator): any other value would move a
     * chunk's end outside the text. walk_limit bounds each walk: it must not be negative. */
    if (s.size == 0 || chunk_size < 1 || chunk_size > huge || chunk_overlap < 0 || chunk_overlap > huge ||
        s.shift_count > MAX_SHIFTS || widest_shift < 0 || widest_shift > huge ||
        (trailing_space != 0 && trailing_space != s.size) || s.walk_limit < 0 || s.walk_limit > huge)
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < s.shift_count; i++) {
        s.shifts[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shifts, i));
        if (s.shifts[i] == -1 && PyErr_Occurred()) return NULL;
        if (s.shifts[i] < 1 || s.shifts[i] >= s.size) Py_RETURN_NONE; /* not a separator's profile */
    }

    PyObject *chunks = PyList_New(0);
    if (chunks == NULL || s.length == 0) return chunks;
    const Py_ssize_t last_budget = s.length - chunk_size; /* a chunk starting here or later reaches the end */
    Py_ssize_t start = 0, closed = -1, previous_end = -1, searched_from = -1, found_after = -1, j, end, floor;
    while (start < last_budget) {
        Py_ssize_t chunk_start = start;
        /* start < length - chunk_size, so start + chunk_size does not overflow */
        j = find(&s, start, start + chunk_size, -1);
        if (j == -1) {
            j = start == searched_from ? found_after : find(&s, start, s.length, 1);
            if (j == -1) break; /* the last chunk: to the text's end */
        } else if (j >= 0 && j > start && may_overlap(&s, j)) { /* 0 < j < length */
            Py_ssize_t first = chain_start(&s, j, start);
            j = first < 0 ? first : last_aligned(&s, first, j + s.size);
        }
        if (j < 0) goto stopped;
        end = j + s.size;
        if (end == closed) {
            j = found_after = find(&s, closed, s.length, 1);
            if (j == FAILED) goto stopped;
            searched_from = closed;
            floor = (j < 0 ? s.length : j + s.size) - chunk_size;
        } else {
            closed = end; /* end <= length: an occurrence's end */
            while (start < end && is_space_at(&s, start)) start++;
            if (start < end) end -= trailing_space;
            while (end > start && is_space_at(&s, end - 1)) end--;
            if (start < end && end > previous_end) {
                if (add(chunks, start, end) < 0) goto failed;
                previous_end = end;
            }
            floor = closed - chunk_overlap;
        }
        Py_ssize_t low = floor - s.size > chunk_start ? floor - s.size : chunk_start;
        j = find(&s, low, closed - 1, 1);
        if (j == FAILED) goto stopped;
        if (j >= 0 && j < low + widest_shift) {
            Py_ssize_t first = chain_start(&s, j, chunk_start);
            if (first < 0) {
                j = first;
                goto stopped;
            }
            if (first != j) {
                j = first_aligned(&s, first, floor, closed);
                if (j == FAILED || j == DENSE_RUN) goto stopped;
            }
        }
        start = j < 0 ? closed : j + s.size;
    }
    /* The last chunk, to the text's end (trimmed to nothing where a chunk above already ended there). */
    end = s.length;
    while (start < end && is_space_at(&s, start)) start++;
    if (start < end) {
        Py_ssize_t ends_with = PyUnicode_Tailmatch(s.text, s.separator, 0, s.length, 1);
        if (ends_with < 0) goto failed;
        if (ends_with) end -= trailing_space;
    }
    while (end > start && is_space_at(&s, end - 1)) end--;
    if (start < end && end > previous_end && add(chunks, start, end) < 0) goto failed;
    return chunks;

stopped: /* j is FAILED (an exception is set) or DENSE_RUN (Python's search takes the text) */
    if (j == DENSE_RUN) {
        Py_DECREF(chunks);
        Py_RETURN_NONE;
    }
failed:
    Py_DECREF(chunks);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bounds", bounds, METH_VARARGS,
     "bounds(text, separator, chunk_size, chunk_overlap, shifts, overlap_tails, widest_shift, trailing_space,\n"
     "walk_limit) -> list[tuple[int, int]] | None: separator_search.bounds_by_search's chunks, or None where a\n"
     "chain of overlapping occurrences is longer than walk_limit (the Python search takes the text)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "separator_search_native",
    .m_doc = "The character splitter's search for chunk bounds (core.splitters.fast.separator_search), in C.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_separator_search_native(void) { return PyModule_Create(&module); }
