/*
 * kernelindex_sdk.checks._runrules: the quick rules of a v1alpha1 run, in C.
 *
 * configure(ranks, factors, results, recent_days, twin) takes the twin's tables once
 * (the statistics' ranks, the units' factors, where each result lives, how many days
 * back a run counts as recent) and the twin itself; then
 *
 * run_passes(spec, cutoff) answers True or False exactly as
 * kernelindex_sdk.checks.v1alpha1.run_spec_passes (its twin, the definition) would for
 * the common run, with `cutoff` as _past_cutoff's answer, or None ("ask the twin") for
 * every other:
 *
 *   - every dict read is an exact dict whose keys are exact str (as strict JSON
 *     gives them: no Python code runs while this module reads them);
 *   - spec's "observedAt" is an exact str, its first ten chars before `cutoff` (a
 *     recent run needs its timestamp parsed: None);
 *   - exactly one result of `results` (RESULTS: (field, summary key, metric)) is given
 *     (not None), with a summary and an exact str "primaryStatistic"; or none, and no
 *     measurements (a run that did not pass);
 *   - "measurements", where given and not empty, is an exact list of dicts whose
 *     "statistic", "unit" and "metric" are exact str;
 *   - every figure ranked is an exact int or float, and no two share a rank.
 *
 * Where the twin would raise (a key missing, a value of another type) this answers
 * None, and the twin, asked next, answers False. Only the record's own field names
 * are written here, as the twin writes them.
 *
 * quick(spec, now) is the version's QUICK_RULES entry, the twin's answer always:
 * run_passes with the clock's cutoff (now None: the UTC date `recent_days` days back,
 * kept for the day) where it answers, else (None, or any `now` given) the twin's call.
 *
 * tests/test_checks.py holds run_passes and quick to the twin on drawn runs. RULES_VERSION names these semantics: v1alpha1.py leaves a build of
 * another version unused (an old in-place build of an editable install).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <time.h>

#define RULES_VERSION 2
#define MAX_RANKS 64
#define MAX_SEEN 16

/* configure()'s tables and twin (strong references), and the clock's cutoff of one day. */
static PyObject *the_ranks, *the_factors, *the_results, *the_twin;
static long the_recent_days = -1;
static long cutoff_day = -1;
static PyObject *cutoff_text;

static PyObject *s_observed_at, *s_primary, *s_measurements, *s_statistic, *s_unit,
    *s_metric, *s_value, *s_p50, *s_median;

/* The verdicts: True, False, or None (ask the twin); NO_RESULT: the run gives none. */
enum verdict { NO_RESULT = -2, ASK = -1, FAILS = 0, PASSES = 1 };

/* The figures ranked so far (new references, by rank) and the statistics seen among
   the measurements (borrowed: their measurements hold them). */
struct figures {
    PyObject *slots[MAX_RANKS];
    PyObject *seen[MAX_SEEN];
    int seen_count;
};

/* d[key], borrowed; NULL where absent or on an error (cleared: the twin decides). */
static PyObject *
get(PyObject *d, PyObject *key)
{
    PyObject *found = PyDict_GetItemWithError(d, key);
    if (found == NULL) {
        PyErr_Clear();
    }
    return found;
}

/* Whether every key of `d` is an exact str: then looking a str up in it, or walking
   it, runs no Python code (no key's __eq__ or __hash__), so nothing can change a
   value this module holds a borrowed reference to. Every dict of the record is
   checked before it is read; the tables are the twin's own. */
static int
plain_keys(PyObject *d)
{
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(d, &position, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            return 0;
        }
    }
    return 1;
}

static int
is_number(PyObject *value)
{
    return PyLong_CheckExact(value) || PyFloat_CheckExact(value);
}

/* Put `value` (a new reference, taken over) at `rank`; ASK where the rank is not a
   small int or is taken (the twin would compare two figures of one rank). */
static enum verdict
place(struct figures *figures, PyObject *rank, PyObject *value)
{
    Py_ssize_t at = PyLong_CheckExact(rank) ? PyLong_AsSsize_t(rank) : -1;
    if (at < 0 || at >= MAX_RANKS || figures->slots[at] != NULL) {
        PyErr_Clear();
        Py_DECREF(value);
        return ASK;
    }
    figures->slots[at] = value;
    return PASSES;
}

/* 1 if `key` (an exact str) is among the statistics seen, 0 if not, -1: ASK. */
static int
seen_before(struct figures *figures, PyObject *key)
{
    for (int i = 0; i < figures->seen_count; i++) {
        PyObject *other = figures->seen[i];
        if (other == key) {
            return 1;
        }
        int differs = PyUnicode_Compare(other, key);
        if (differs == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (differs == 0) {
            return 1;
        }
    }
    if (figures->seen_count == MAX_SEEN) {
        return -1;
    }
    figures->seen[figures->seen_count++] = key;
    return 0;
}

/* Whether observed[:10] >= cutoff (a recent run: ASK); 1, 0, or -1 on an error. */
static int
is_recent(PyObject *observed, PyObject *cutoff)
{
    if (PyUnicode_IS_ASCII(observed) && PyUnicode_IS_ASCII(cutoff)
        && PyUnicode_GET_LENGTH(observed) >= 10 && PyUnicode_GET_LENGTH(cutoff) == 10) {
        return memcmp(PyUnicode_1BYTE_DATA(observed), PyUnicode_1BYTE_DATA(cutoff), 10) >= 0;
    }
    PyObject *day = PyUnicode_Substring(observed, 0, 10);
    if (day == NULL) {
        return -1;
    }
    int recent = PyObject_RichCompareBool(day, cutoff, Py_GE);
    Py_DECREF(day);
    return recent;
}

/* The result given: its summary, primary statistic and metric (borrowed); NO_RESULT
   where none is given, ASK where both are or they are not as the common run has them. */
static enum verdict
the_result(PyObject *spec, PyObject **summary, PyObject **primary, PyObject **metric)
{
    PyObject *result = NULL, *where = NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(the_results); i++) {
        PyObject *entry = PyTuple_GET_ITEM(the_results, i);
        PyObject *given = get(spec, PyTuple_GET_ITEM(entry, 0));
        if (given != NULL && given != Py_None) {
            if (result != NULL) {
                return ASK; /* both results: the twin's general path */
            }
            result = given;
            where = entry;
        }
    }
    if (result == NULL) {
        return NO_RESULT;
    }
    if (!PyDict_CheckExact(result) || !plain_keys(result)) {
        return ASK;
    }
    *summary = get(result, PyTuple_GET_ITEM(where, 1));
    *primary = get(result, s_primary);
    *metric = PyTuple_GET_ITEM(where, 2);
    if (*summary == NULL || !PyDict_CheckExact(*summary) || !plain_keys(*summary)
        || *primary == NULL || !PyUnicode_CheckExact(*primary)) {
        return ASK;
    }
    return PASSES;
}

/* The summary's ranked figures. */
static enum verdict
rank_summary(PyObject *summary, struct figures *figures)
{
    Py_ssize_t position = 0;
    PyObject *statistic, *value;
    while (PyDict_Next(summary, &position, &statistic, &value)) {
        PyObject *rank = get(the_ranks, statistic);
        if (rank == NULL) {
            continue;
        }
        if (!is_number(value)) {
            return ASK;
        }
        Py_INCREF(value);
        if (place(figures, rank, value) == ASK) {
            return ASK;
        }
    }
    return PASSES;
}

/* One measurement's rules, its figure (converted to the summary's unit) ranked. */
static enum verdict
measurement_rules(PyObject *measurement, PyObject *summary, PyObject *metric,
                  PyObject *units, struct figures *figures)
{
    if (!PyDict_CheckExact(measurement) || !plain_keys(measurement)) {
        return ASK;
    }
    PyObject *statistic = get(measurement, s_statistic);
    PyObject *unit = get(measurement, s_unit);
    if (statistic == NULL || unit == NULL || !PyUnicode_CheckExact(statistic)
        || !PyUnicode_CheckExact(unit)) {
        return ASK;
    }
    PyObject *factor = get(units, unit);
    if (factor == NULL) {
        return FAILS; /* a unit of no metric, or of another one */
    }
    PyObject *its_metric = get(measurement, s_metric);
    if (its_metric == NULL || !PyUnicode_CheckExact(its_metric)) {
        return ASK;
    }
    if (its_metric != metric && PyUnicode_Compare(its_metric, metric) != 0) {
        return PyErr_Occurred() ? (PyErr_Clear(), ASK) : FAILS;
    }
    PyObject *key =
        (statistic == s_p50 || PyUnicode_Compare(statistic, s_p50) == 0) ? s_median : statistic;
    int repeated = PyDict_Contains(summary, key);
    if (repeated == 0) {
        repeated = seen_before(figures, key);
    }
    if (repeated != 0) {
        return repeated < 0 ? (PyErr_Clear(), ASK) : FAILS; /* a statistic given twice */
    }
    PyObject *rank = get(the_ranks, statistic);
    if (rank == NULL) {
        return PASSES; /* "p50" has no rank: it is never ranked */
    }
    PyObject *value = get(measurement, s_value);
    if (value == NULL || !is_number(value) || !is_number(factor)) {
        return ASK;
    }
    PyObject *converted = PyNumber_Multiply(value, factor);
    if (converted == NULL) {
        PyErr_Clear();
        return ASK;
    }
    return place(figures, rank, converted);
}

/* The measurements' rules (none given, or an empty list: nothing to check). */
static enum verdict
measurements_rules(PyObject *spec, PyObject *summary, PyObject *metric,
                   struct figures *figures)
{
    PyObject *measurements = get(spec, s_measurements);
    if (measurements == NULL || measurements == Py_None) {
        return PASSES;
    }
    if (!PyList_CheckExact(measurements)) {
        return ASK;
    }
    if (PyList_GET_SIZE(measurements) == 0) {
        return PASSES;
    }
    PyObject *units = get(the_factors, metric);
    if (units == NULL || !PyDict_CheckExact(units)) {
        return ASK;
    }
    enum verdict verdict = PASSES;
    for (Py_ssize_t i = 0; verdict == PASSES && i < PyList_GET_SIZE(measurements); i++) {
        verdict =
            measurement_rules(PyList_GET_ITEM(measurements, i), summary, metric, units, figures);
    }
    return verdict;
}

/* The ranked figures, by rank, must not decrease (the first compared with itself, as
   the twin does: a NaN fails). */
static enum verdict
in_order(struct figures *figures)
{
    PyObject *previous = NULL;
    int count = 0;
    for (int at = 0; at < MAX_RANKS; at++) {
        count += figures->slots[at] != NULL;
    }
    if (count < 2) {
        return PASSES;
    }
    for (int at = 0; at < MAX_RANKS; at++) {
        PyObject *value = figures->slots[at];
        if (value == NULL) {
            continue;
        }
        if (previous == NULL) {
            previous = value;
        }
        int ordered = PyObject_RichCompareBool(previous, value, Py_LE);
        if (ordered <= 0) {
            return ordered < 0 ? (PyErr_Clear(), ASK) : FAILS;
        }
        previous = value;
    }
    return PASSES;
}

static enum verdict
judge_ranked(PyObject *spec, PyObject *cutoff, struct figures *figures)
{
    PyObject *observed = get(spec, s_observed_at);
    if (observed == NULL || !PyUnicode_CheckExact(observed)) {
        return ASK;
    }
    int recent = is_recent(observed, cutoff);
    if (recent != 0) {
        PyErr_Clear();
        return ASK; /* recent: the twin parses the timestamp */
    }
    PyObject *summary, *primary, *metric;
    enum verdict given = the_result(spec, &summary, &primary, &metric);
    if (given == NO_RESULT) {
        /* A run that did not pass (no result): nothing to rank unless it has
           measurements ("measurements": null makes the twin raise: ASK). */
        PyObject *measurements = get(spec, s_measurements);
        if (measurements == NULL
            || (PyList_CheckExact(measurements) && PyList_GET_SIZE(measurements) == 0)) {
            return PASSES;
        }
        return ASK;
    }
    if (given == ASK) {
        return ASK;
    }
    int has_primary = PyDict_Contains(summary, primary);
    if (has_primary <= 0) {
        return has_primary < 0 ? (PyErr_Clear(), ASK) : FAILS;
    }
    enum verdict verdict = rank_summary(summary, figures);
    if (verdict == PASSES) {
        verdict = measurements_rules(spec, summary, metric, figures);
    }
    return verdict == PASSES ? in_order(figures) : verdict;
}

/* The verdict on `spec` with `cutoff` (an exact str). */
static enum verdict
judge(PyObject *spec, PyObject *cutoff)
{
    if (!PyDict_CheckExact(spec) || !plain_keys(spec)) {
        return ASK;
    }
    struct figures figures;
    memset(figures.slots, 0, sizeof(figures.slots));
    figures.seen_count = 0;
    enum verdict verdict = judge_ranked(spec, cutoff, &figures);
    for (int at = 0; at < MAX_RANKS; at++) {
        Py_XDECREF(figures.slots[at]);
    }
    return verdict;
}

static int
configured(void)
{
    if (the_ranks == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_runrules: configure() was not called");
        return 0;
    }
    return 1;
}

static PyObject *
configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5 || !PyDict_CheckExact(args[0]) || !PyDict_CheckExact(args[1])
        || !PyTuple_CheckExact(args[2]) || !PyLong_CheckExact(args[3])
        || !PyCallable_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "configure(ranks: dict, factors: dict, "
                                         "results: tuple, recent_days: int, twin)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args[2]); i++) {
        PyObject *entry = PyTuple_GET_ITEM(args[2], i);
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3
            || !PyUnicode_CheckExact(PyTuple_GET_ITEM(entry, 2))) {
            PyErr_SetString(PyExc_TypeError, "configure(): results of (field, key, metric)");
            return NULL;
        }
    }
    long days = PyLong_AsLong(args[3]);
    if (days == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_XSETREF(the_ranks, args[0]);
    Py_INCREF(args[1]);
    Py_XSETREF(the_factors, args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(the_results, args[2]);
    Py_INCREF(args[4]);
    Py_XSETREF(the_twin, args[4]);
    the_recent_days = days;
    cutoff_day = -1;
    Py_CLEAR(cutoff_text);
    Py_RETURN_NONE;
}

static PyObject *
run_passes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2 || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "run_passes(spec, cutoff: str)");
        return NULL;
    }
    if (!configured()) {
        return NULL;
    }
    enum verdict verdict = judge(args[0], args[1]);
    if (verdict == ASK) {
        Py_RETURN_NONE;
    }
    return PyBool_FromLong(verdict == PASSES);
}

/* The clock's cutoff: the UTC date `the_recent_days` days before today, YYYY-MM-DD
   (borrowed; NULL with an exception set). POSIX time has no leap seconds, so the date
   of `now - days * 86400` is today's date less `days` days. */
static PyObject *
clock_cutoff(void)
{
    time_t now = time(NULL);
    long day = (long)(now / 86400);
    if (day == cutoff_day && cutoff_text != NULL) {
        return cutoff_text;
    }
    time_t back = now - (time_t)the_recent_days * 86400;
    struct tm parts;
    char text[32];
    if (gmtime_r(&back, &parts) == NULL || parts.tm_year + 1900 < 1000
        || parts.tm_year + 1900 > 9999
        || strftime(text, sizeof(text), "%Y-%m-%d", &parts) != 10) {
        PyErr_SetString(PyExc_OverflowError, "_runrules: the clock is out of range");
        return NULL;
    }
    PyObject *fresh = PyUnicode_FromString(text);
    if (fresh == NULL) {
        return NULL;
    }
    Py_XSETREF(cutoff_text, fresh);
    cutoff_day = day;
    return cutoff_text;
}

static PyObject *
quick(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "quick(spec, now)");
        return NULL;
    }
    if (!configured()) {
        return NULL;
    }
    if (args[1] == Py_None) {
        PyObject *cutoff = clock_cutoff();
        if (cutoff == NULL) {
            PyErr_Clear();
        }
        else {
            enum verdict verdict = judge(args[0], cutoff);
            if (verdict != ASK) {
                return PyBool_FromLong(verdict == PASSES);
            }
        }
    }
    /* A run this module does not judge, or a given moment: the twin's answer. */
    return PyObject_Vectorcall(the_twin, args, 2, NULL);
}

static PyMethodDef rules_methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(ranks, factors, results, recent_days, twin): the twin's tables, and it."},
    {"run_passes", (PyCFunction)(void (*)(void))run_passes, METH_FASTCALL,
     "run_passes(spec, cutoff) -> bool | None: v1alpha1.run_spec_passes for the common "
     "run, None for the others."},
    {"quick", (PyCFunction)(void (*)(void))quick, METH_FASTCALL,
     "quick(spec, now) -> bool: run_passes with the clock's cutoff where it answers, "
     "else the twin's answer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef rules_module = {
    PyModuleDef_HEAD_INIT,
    "_runrules",
    "The quick rules of a v1alpha1 run, in C (v1alpha1.run_spec_passes' twin).",
    -1,
    rules_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

static int
intern(PyObject **name, const char *text)
{
    *name = PyUnicode_InternFromString(text);
    return *name == NULL ? -1 : 0;
}

PyMODINIT_FUNC
PyInit__runrules(void)
{
    if (intern(&s_observed_at, "observedAt") < 0 || intern(&s_primary, "primaryStatistic") < 0
        || intern(&s_measurements, "measurements") < 0 || intern(&s_statistic, "statistic") < 0
        || intern(&s_unit, "unit") < 0 || intern(&s_metric, "metric") < 0
        || intern(&s_value, "value") < 0 || intern(&s_p50, "p50") < 0
        || intern(&s_median, "median") < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&rules_module);
    if (module != NULL && PyModule_AddIntConstant(module, "RULES_VERSION", RULES_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
