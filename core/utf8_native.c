/* A str's UTF-8, lone surrogates passed (text.encode("utf-8", "surrogatepass")), fed to a hash 4-6x sooner.
 *
 * Every Document's id hashes its text's UTF-8 (core.schema.content_id). CPython encodes a str stored one or
 * two bytes a character (PEP 393) a character at a time, branching on each character's width: on prose in
 * Cyrillic or CJK that was a third of a character-sized split's time. Here eight characters go at once
 * (SSE4.1): all ASCII, packed; all under U+0800, each one's one or two bytes made side by side and packed by
 * a shuffle; otherwise as four 32-bit lanes of one to three bytes each, packed the same way. Each shuffle
 * comes from a table indexed by the characters' widths, built at import.
 *
 * With "surrogatepass" a surrogate is three bytes like any other character from U+0800 (each on its own: CPython
 * pairs none), so no character is special. A str stored four bytes a character (one past U+FFFF) goes the same
 * way eight at a time where none of the eight is past U+FFFF, and a character at a time where one is. Without
 * SSE4.1 (or off x86-64) a character at a time.
 *
 * The UTF-8 goes to the caller's update (a hash's) a piece at a time, from one 64 KB buffer: a text's whole
 * UTF-8 is never held (on a 4 MB document that was 4 MB more at the split's peak). An ASCII text is handed
 * over as it is stored.
 *
 * The text is untrusted: a piece of PIECE characters takes at most 4 bytes each, and the buffer holds that plus
 * 16 bytes of slack for the last block's stores.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE41_PATH 1
#include <immintrin.h>
#endif

/* One character's UTF-8 (a surrogate as three bytes, as "surrogatepass" writes it). */
static inline uint8_t *encode_one(uint32_t c, uint8_t *out) {
    if (c >= 0x10000) {
        *out++ = (uint8_t)(0xF0 | c >> 18);
        *out++ = (uint8_t)(0x80 | (c >> 12 & 0x3F));
        *out++ = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    } else if (c < 0x80) {
        *out++ = (uint8_t)c;
    } else if (c < 0x800) {
        *out++ = (uint8_t)(0xC0 | c >> 6);
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    } else {
        *out++ = (uint8_t)(0xE0 | c >> 12);
        *out++ = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        *out++ = (uint8_t)(0x80 | (c & 0x3F));
    }
    return out;
}

#ifdef HAVE_SSE41_PATH

/* A shuffle that packs the bytes wanted out of a 16-byte register, and how many it keeps. */
typedef struct {
    uint8_t shuffle[16];
    uint8_t length;
} Pack;

/* Eight characters under U+0800, two bytes each (lead, continuation); bit i of the index: character i is ASCII,
 * its second byte dropped. */
static Pack pairs_packs[256];
/* Four characters, one 32-bit lane each holding its bytes first; bit i of the index: lane i takes two bytes or
 * more, bit i + 4: three. */
static Pack lanes_packs[256];
static int sse41;

static void build_packs(void) {
    for (int index = 0; index < 256; index++) {
        Pack *pack = &pairs_packs[index];
        int n = 0;
        for (int unit = 0; unit < 8; unit++) {
            pack->shuffle[n++] = (uint8_t)(2 * unit);
            if (!(index >> unit & 1)) pack->shuffle[n++] = (uint8_t)(2 * unit + 1);
        }
        pack->length = (uint8_t)n;
        for (; n < 16; n++) pack->shuffle[n] = 0x80; /* a zero byte, in the slack */

        pack = &lanes_packs[index];
        n = 0;
        for (int lane = 0; lane < 4; lane++) {
            int width = 1 + (index >> lane & 1) + (index >> (lane + 4) & 1);
            for (int byte = 0; byte < width; byte++) pack->shuffle[n++] = (uint8_t)(4 * lane + byte);
        }
        pack->length = (uint8_t)n;
        for (; n < 16; n++) pack->shuffle[n] = 0x80;
    }
}

/* Four characters (32-bit lanes) of one to three bytes each: writes 16 bytes at out, returns the end of theirs. */
__attribute__((target("sse4.1"))) static inline uint8_t *encode_lanes(__m128i c, uint8_t *out) {
    const __m128i low6 = _mm_set1_epi32(0x3F), continuation = _mm_set1_epi32(0x80);
    __m128i last = _mm_or_si128(_mm_and_si128(c, low6), continuation);
    __m128i middle = _mm_or_si128(_mm_and_si128(_mm_srli_epi32(c, 6), low6), continuation);
    __m128i two = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(c, 6), _mm_set1_epi32(0xC0)), _mm_slli_epi32(last, 8));
    __m128i three = _mm_or_si128(_mm_or_si128(_mm_srli_epi32(c, 12), _mm_set1_epi32(0xE0)),
                                 _mm_or_si128(_mm_slli_epi32(middle, 8), _mm_slli_epi32(last, 16)));
    __m128i wide = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7F));
    __m128i wider = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7FF));
    __m128i bytes = _mm_blendv_epi8(_mm_blendv_epi8(c, two, wide), three, wider);
    int index = _mm_movemask_ps(_mm_castsi128_ps(wide)) | _mm_movemask_ps(_mm_castsi128_ps(wider)) << 4;
    const Pack *pack = &lanes_packs[index];
    _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(bytes, _mm_loadu_si128((const __m128i *)pack->shuffle)));
    return out + pack->length;
}

/* Eight characters (16-bit units): writes at most 16 bytes past the end of theirs, which it returns. */
__attribute__((target("sse4.1"))) static inline uint8_t *encode_eight(__m128i units, uint8_t *out) {
    const __m128i zero = _mm_setzero_si128();
    if (_mm_testz_si128(units, _mm_set1_epi16((short)0xFF80))) { /* ASCII */
        _mm_storel_epi64((__m128i *)out, _mm_packus_epi16(units, units));
        return out + 8;
    }
    if (_mm_testz_si128(units, _mm_set1_epi16((short)0xF800))) { /* under U+0800: one or two bytes each */
        __m128i lead = _mm_or_si128(_mm_srli_epi16(units, 6), _mm_set1_epi16(0xC0));
        __m128i trail = _mm_or_si128(_mm_and_si128(units, _mm_set1_epi16(0x3F)), _mm_set1_epi16(0x80));
        __m128i ascii = _mm_cmplt_epi16(units, _mm_set1_epi16(0x80));
        __m128i pairs = _mm_blendv_epi8(_mm_or_si128(lead, _mm_slli_epi16(trail, 8)), units, ascii);
        const Pack *pack = &pairs_packs[_mm_movemask_epi8(_mm_packs_epi16(ascii, zero)) & 0xFF];
        _mm_storeu_si128((__m128i *)out, _mm_shuffle_epi8(pairs, _mm_loadu_si128((const __m128i *)pack->shuffle)));
        return out + pack->length;
    }
    out = encode_lanes(_mm_unpacklo_epi16(units, zero), out);
    return encode_lanes(_mm_unpackhi_epi16(units, zero), out);
}


__attribute__((target("sse4.1"))) static uint8_t *ucs2_encode(const uint16_t *text, Py_ssize_t n, uint8_t *out) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) out = encode_eight(_mm_loadu_si128((const __m128i *)(text + i)), out);
    for (; i < n; i++) out = encode_one(text[i], out);
    return out;
}

__attribute__((target("sse4.1"))) static uint8_t *ucs1_encode(const uint8_t *text, Py_ssize_t n, uint8_t *out) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) out = encode_eight(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(text + i))), out);
    for (; i < n; i++) out = encode_one(text[i], out);
    return out;
}

__attribute__((target("sse4.1"))) static uint8_t *ucs4_encode(const uint32_t *text, Py_ssize_t n, uint8_t *out) {
    Py_ssize_t i = 0;
    const __m128i astral = _mm_set1_epi32((int)0xFFFF0000);
    while (i + 8 <= n) {
        __m128i low = _mm_loadu_si128((const __m128i *)(text + i)), high = _mm_loadu_si128((const __m128i *)(text + i + 4));
        if (_mm_testz_si128(_mm_or_si128(low, high), astral)) {
            out = encode_eight(_mm_packus_epi32(low, high), out);
            i += 8;
        } else {
            for (Py_ssize_t stop = i + 8; i < stop; i++) out = encode_one(text[i], out);
        }
    }
    for (; i < n; i++) out = encode_one(text[i], out);
    return out;
}

#endif /* HAVE_SSE41_PATH */

/* Characters encoded at a time: at most 64 KB of UTF-8, which stays in cache and is never the whole text's. */
#define PIECE 16384

/* The UTF-8 of count characters of data from start, written at out (with 16 bytes of slack); returns its end. */
static uint8_t *encode_piece(int kind, const void *data, Py_ssize_t start, Py_ssize_t count, uint8_t *out) {
#ifdef HAVE_SSE41_PATH
    if (sse41) {
        if (kind == PyUnicode_1BYTE_KIND) return ucs1_encode((const uint8_t *)data + start, count, out);
        if (kind == PyUnicode_2BYTE_KIND) return ucs2_encode((const uint16_t *)data + start, count, out);
        return ucs4_encode((const uint32_t *)data + start, count, out);
    }
#endif
    for (Py_ssize_t i = start; i < start + count; i++) out = encode_one(PyUnicode_READ(kind, data, i), out);
    return out;
}

/* update(view of length bytes at data), the view released after: update may not keep it. */
static int call_on_view(PyObject *update, const void *data, Py_ssize_t length) {
    PyObject *view = PyMemoryView_FromMemory((char *)data, length, PyBUF_READ);
    if (view == NULL) return -1;
    PyObject *result = PyObject_CallOneArg(update, view);
    PyObject *type = NULL, *value = NULL, *traceback = NULL;
    if (result == NULL) PyErr_Fetch(&type, &value, &traceback); /* release() must not run with it set */
    PyObject *released = PyObject_CallMethod(view, "release", NULL);
    Py_DECREF(view);
    Py_XDECREF(released);
    if (result == NULL) {
        PyErr_Restore(type, value, traceback); /* update's error is the one to raise */
        return -1;
    }
    Py_DECREF(result);
    return released != NULL ? 0 : -1;
}

static PyObject *feed(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "feed() takes an update callable and a str");
        return NULL;
    }
    PyObject *update = args[0], *text = args[1];
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (n == 0) Py_RETURN_NONE;
    if (PyUnicode_IS_ASCII(text)) { /* its UTF-8 is how it is stored: no copy */
        if (call_on_view(update, PyUnicode_DATA(text), n) < 0) return NULL;
        Py_RETURN_NONE;
    }
    uint8_t *buffer = PyMem_Malloc(4 * PIECE + 16); /* four bytes a character at most, and the slack */
    if (buffer == NULL) return PyErr_NoMemory();
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t start = 0; start < n; start += PIECE) {
        Py_ssize_t count = n - start < PIECE ? n - start : PIECE;
        uint8_t *end = encode_piece(kind, data, start, count, buffer);
        if (call_on_view(update, buffer, end - buffer) < 0) {
            PyMem_Free(buffer);
            return NULL;
        }
    }
    PyMem_Free(buffer);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"feed", (PyCFunction)(void (*)(void))feed, METH_FASTCALL,
     "feed(update, text: str) -> None: update(part) for each part of text.encode('utf-8', 'surrogatepass'), in\n"
     "order, never the whole at once (an ASCII text in one part, read where it is stored). Each part is a\n"
     "memoryview released when update returns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "utf8_native",
    .m_doc = "A str's UTF-8 with lone surrogates passed, fed to a hash a piece at a time (core.schema.content_id).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit_utf8_native(void) {
#ifdef HAVE_SSE41_PATH
    __builtin_cpu_init();
    sse41 = __builtin_cpu_supports("sse4.1") != 0;
    build_packs();
#endif
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
#ifdef HAVE_SSE41_PATH
    if (PyModule_AddIntConstant(m, "VECTORIZED", sse41) < 0) {
#else
    if (PyModule_AddIntConstant(m, "VECTORIZED", 0) < 0) {
#endif
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
