/* A str's UTF-8, lone surrogates passed: the bytes of text.encode("utf-8", "surrogatepass"), 4-6x sooner.
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
 * SSE4.1 (or off x86-64) CPython's own encoder does the work.
 *
 * The text is untrusted: the output is sized for the widest encoding of its characters' storage, plus 16
 * bytes of slack for the last block's stores, and cut to what was written.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SSE41_PATH 1
#include <immintrin.h>
#endif

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

static PyObject *encode(PyObject *module, PyObject *text) {
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "encode() takes a str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
#ifdef HAVE_SSE41_PATH
    int kind = PyUnicode_KIND(text);
    if (sse41) {
        /* The UTF-8 takes at most 2 bytes a character of a str stored one byte a character, 3 of one stored
         * two, 4 of one stored four; then 16 of slack for the last block's stores. CPython's own encoder
         * sizes its output the same way, and only the pages written are touched. */
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);
        Py_ssize_t most = kind == PyUnicode_1BYTE_KIND ? 2 : kind == PyUnicode_2BYTE_KIND ? 3 : 4;
        if (n > (PY_SSIZE_T_MAX - 16) / most) return PyErr_NoMemory();
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, most * n + 16);
        if (bytes == NULL) return NULL;
        const void *data = PyUnicode_DATA(text);
        uint8_t *start = (uint8_t *)PyBytes_AS_STRING(bytes);
        uint8_t *end = kind == PyUnicode_1BYTE_KIND   ? ucs1_encode(data, n, start)
                       : kind == PyUnicode_2BYTE_KIND ? ucs2_encode(data, n, start)
                                                      : ucs4_encode(data, n, start);
        if (_PyBytes_Resize(&bytes, end - start) < 0) return NULL;
        return bytes;
    }
#endif
    return PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
}

static PyMethodDef methods[] = {
    {"encode", encode, METH_O, "encode(text: str) -> bytes: text.encode('utf-8', 'surrogatepass'), sooner."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "utf8_native",
    .m_doc = "A str's UTF-8 with lone surrogates passed, eight characters at a time (core.schema.content_id).",
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
