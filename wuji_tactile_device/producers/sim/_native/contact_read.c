/*
 * The distributed contact model's per-frame read in one compiled call (CPython C API, buffer
 * protocol: no numpy headers at build time).
 *
 * The same arithmetic as the numpy path of `contact_forces.ContactForceModel.read` (`_extract`,
 * `_pairs_of`) and `contact_model.DistributedContact` (`_footprint`, `traction`, `_pair_readings`,
 * `_pad_readings`, `solution_images`): contact extraction and the active-pad mask, grouping into
 * (pad, object geom) pairs, the signed distances of the six primitive shapes, the exact level
 * solve, stick and slip, the elastomer's influence sums, the pad remainder (inside the taxels' friction cones: `cone_spread`), the resultants and
 * stuck fractions, and with images the image scatter. The numpy path is the reference; the tests
 * hold the two to 1e-12 of the frame's largest force (tests/test_sim_read_equivalence.py).
 *
 * The same method as the numpy path: the level solve on the K lowest points of each footprint
 * (quickselect instead of argpartition, K = the grid's first_k), grown 4× while the subset does not
 * hold the footprint; only the points at or below the first bound λ₀ = min sdf + V / A_closest
 * are considered (no other can be active). Points without load (zero weight) are left out of
 * the support: they change no sum.
 *
 * Module `_contact_read`, one type `Reader`:
 *   Reader(tables...)            grids and model tables of one `DistributedContact` (checked once)
 *   .configure(tables...)        the extraction tables of one `ContactForceModel` (checked once)
 *   .read(mjdata arrays..., outputs...)   the whole frame
 *   .solve(pairs..., outputs...)          the pairs' solution (the test entry: synthetic forces)
 * Every array is checked (dtype, shape, contiguity of outputs, index ranges) on every call; a
 * mismatch raises ValueError naming the array and the rule.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "contact_read.c reads '<' buffer formats as native: little-endian hosts only"
#endif

/* The calling convention's version: `contact_model.py` refuses a build of another one (a stale
 * extension left by an older `pip install -e .`). Raise it with every change of an entry point's
 * arguments or outputs. */
#define CONTACT_READ_ABI 3
#define NPAD 5
#define MAX_SLOTS 64
#define NCODE 11
#define IMG_ROWS 48
#define IMG_COLS 32
#define NPX (IMG_ROWS * IMG_COLS)
#define GROSS_SLIP_TOLERANCE 0.005
#define MIN_VOLUME 1e-24
#define MIN_NORMAL_ALIGNMENT 0.25
#define FRONT_MARGIN 0.003
#define ELLIPSOID_ITERATIONS 8

/* MuJoCo geom type codes (mjtGeom) */
enum { G_PLANE = 0, G_SPHERE = 2, G_CAPSULE = 3, G_ELLIPSOID = 4, G_CYLINDER = 5, G_BOX = 6 };

/* ---------------------------------------------------------------------------------------------
 * Buffer views
 * ------------------------------------------------------------------------------------------- */

static int fmt_is(const char *f, char kind)
{
    if (f == NULL)
        return kind == 'B';
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (f[0] == '\0' || f[1] != '\0')
        return 0;
    switch (kind) {
    case 'd': return *f == 'd';
    case 'f': return *f == 'f';
    case 'i': return *f == 'i' || (*f == 'l' && sizeof(long) == 4);
    case 'q': return *f == 'q' || (*f == 'l' && sizeof(long) == 8) || (*f == 'n' && sizeof(Py_ssize_t) == 8);
    case '?': return *f == '?';
    }
    return 0;
}

static const char *kind_name(char kind)
{
    switch (kind) {
    case 'd': return "float64";
    case 'f': return "float32";
    case 'i': return "int32";
    case 'q': return "int64";
    case '?': return "bool";
    }
    return "?";
}

/* A view of `o` named `name`: element kind, ndim and shape (−1: any length) checked; `contig`:
 * C-contiguous required (outputs and constant tables); `writable`. Returns 0 and sets ValueError
 * on mismatch (the view is then released). */
static int get_view(PyObject *o, Py_buffer *b, const char *name, char kind, int ndim, const Py_ssize_t *shape,
                    int contig, int writable)
{
    int flags = PyBUF_FORMAT | (contig ? PyBUF_C_CONTIGUOUS : PyBUF_STRIDES) | (writable ? PyBUF_WRITABLE : 0);
    b->obj = NULL;
    if (PyObject_GetBuffer(o, b, flags) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "native contact read: %s must be a %s%s%s array (buffer protocol), got %.80s",
                     name, contig ? "C-contiguous " : "", writable ? "writable " : "", kind_name(kind),
                     Py_TYPE(o)->tp_name);
        b->obj = NULL;
        return 0;
    }
    int ok = fmt_is(b->format, kind) && b->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        if (shape[i] >= 0 && b->shape[i] != shape[i])
            ok = 0;
    if (!ok) {
        char want[96], got[96];
        int n = 0;
        n += snprintf(want + n, sizeof want - n, "(");
        for (int i = 0; i < ndim; i++) {
            if (shape[i] >= 0)
                n += snprintf(want + n, sizeof want - n, i ? ", %zd" : "%zd", shape[i]);
            else
                n += snprintf(want + n, sizeof want - n, i ? ", n" : "n");
        }
        snprintf(want + n, sizeof want - n, ndim == 1 ? ",)" : ")");
        n = 0;
        n += snprintf(got + n, sizeof got - n, "(");
        for (int i = 0; i < b->ndim && n < (int)sizeof got - 16; i++)
            n += snprintf(got + n, sizeof got - n, i ? ", %zd" : "%zd", b->shape ? b->shape[i] : b->len);
        snprintf(got + n, sizeof got - n, b->ndim == 1 ? ",)" : ")");
        PyErr_Format(PyExc_ValueError, "native contact read: %s must be %s of shape %s, got format '%s' shape %s",
                     name, kind_name(kind), want, b->format ? b->format : "B", got);
        PyBuffer_Release(b);
        b->obj = NULL;
        return 0;
    }
    return 1;
}

/* ValueError with a printf message (PyErr_Format has no %g). */
static void value_error(const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    PyErr_SetString(PyExc_ValueError, msg);
}

static void release(Py_buffer *b)
{
    if (b->obj != NULL)
        PyBuffer_Release(b);
    b->obj = NULL;
}

#define P1(b, T, i) (*(const T *)((const char *)(b).buf + (i) * (b).strides[0]))
#define P2(b, T, i, j) (*(const T *)((const char *)(b).buf + (i) * (b).strides[0] + (j) * (b).strides[1]))

/* ---------------------------------------------------------------------------------------------
 * Reader: constant tables
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    Py_buffer points_h;   /* (5, 4, M) distal frame, homogeneous, coordinate-major */
    Py_buffer area;       /* (5·M,) [m²], 0 at padding */
    Py_buffer inv_area;   /* (5·M,) */
    Py_buffer normal;     /* (5·M, 3) outward surface normal (distal) */
    Py_buffer pixel;      /* (5·M,) int64 image pixel 0..1535 */
    Py_buffer GT;         /* (5·M, S) taxel influence per point */
    Py_buffer groups;     /* (5, R, 6) the rim's points in groups: start, end, centre (distal), radius */
    Py_ssize_t M, R;
    int nvalid[NPAD];     /* valid (area > 0) points of each pad: the first nvalid of its M */
    int npix[NPAD];       /* its pixel points (the rim's, in groups, follow up to nvalid) */
    int ngroups[NPAD];
    int first_k;          /* support size tried first (`_Grid.first_k`) */
} Grid;

typedef struct {
    PyObject_HEAD
    Grid grid[2];              /* 0: coarse (taxels only), 1: fine (image grid) */
    Py_buffer geom_type;       /* (G,) int32 model.geom_type */
    Py_buffer geom_size;       /* (G, 3) model.geom_size */
    Py_buffer distal_bodies;   /* (5,) int64 */
    Py_buffer slot_normals;    /* (5, S, 3) */
    Py_ssize_t G, S, max_body;
    double inv_stiffness;
    int ready;                 /* __init__ completed (its tables are held) */
    /* extraction (configure) */
    int configured;
    Py_buffer pair_code;       /* ((G+1)·(G+1),) int64 */
    Py_buffer code_pad;        /* (11,) int64 */
    Py_buffer code_sign;       /* (11,) */
    Py_buffer code_body;       /* (11,) int64 */
    Py_buffer code_slots;      /* (11, S, 3) */
    Py_buffer slot_info;       /* (5·S, 4) normal, r² */
    Py_buffer code_slot0;      /* (11,) int64 */
    Py_buffer taxel_slot;      /* (N,) int64 */
    Py_buffer taxel_rot;       /* (N, 3, 3) */
    Py_buffer pad_rot;         /* (3, 3) columns: pad axes in the distal frame */
    Py_ssize_t N;
    double side_sign;
} Reader;

#define D(b) ((const double *)(b).buf)
#define Q64(b) ((const long long *)(b).buf)

static void grid_release(Grid *g)
{
    release(&g->points_h);
    release(&g->area);
    release(&g->inv_area);
    release(&g->normal);
    release(&g->pixel);
    release(&g->GT);
    release(&g->groups);
}

static void reader_release_extraction(Reader *r)
{
    release(&r->pair_code);
    release(&r->code_pad);
    release(&r->code_sign);
    release(&r->code_body);
    release(&r->code_slots);
    release(&r->slot_info);
    release(&r->code_slot0);
    release(&r->taxel_slot);
    release(&r->taxel_rot);
    release(&r->pad_rot);
    r->configured = 0;
}

static void Reader_dealloc(Reader *r)
{
    grid_release(&r->grid[0]);
    grid_release(&r->grid[1]);
    release(&r->geom_type);
    release(&r->geom_size);
    release(&r->distal_bodies);
    release(&r->slot_normals);
    reader_release_extraction(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* `get_view` of one of a grid's tables (C-contiguous, read-only), named "<which> <field>". */
static int grid_view(PyObject *o, Py_buffer *b, const char *which, const char *field, char kind, int ndim,
                     const Py_ssize_t *shape)
{
    char name[64];
    snprintf(name, sizeof name, "%s %s", which, field);
    return get_view(o, b, name, kind, ndim, shape, 1, 0);
}

static int grid_init(Grid *g, PyObject *const *o, const char *which, Py_ssize_t S)
{
    Py_ssize_t any3[3] = {NPAD, 4, -1};
    if (!grid_view(o[0], &g->points_h, which, "points_h", 'd', 3, any3))
        return 0;
    Py_ssize_t M = g->points_h.shape[2];
    g->M = M;
    Py_ssize_t n1[1] = {NPAD * M}, n2[2] = {NPAD * M, 3}, nG[2] = {NPAD * M, S};
    if (!grid_view(o[1], &g->area, which, "area", 'd', 1, n1) || !grid_view(o[2], &g->inv_area, which, "inv_area", 'd', 1, n1)
        || !grid_view(o[3], &g->normal, which, "normal", 'd', 2, n2) || !grid_view(o[4], &g->pixel, which, "pixel", 'q', 1, n1)
        || !grid_view(o[5], &g->GT, which, "GT", 'd', 2, nG)
        || !grid_view(o[6], &g->groups, which, "rim groups", 'd', 3, (Py_ssize_t[]){NPAD, -1, 6}))
        return 0;
    g->R = g->groups.shape[1];
    const double *area = D(g->area);
    const long long *px = Q64(g->pixel);
    for (int k = 0; k < NPAD; k++) {
        Py_ssize_t n = 0;
        while (n < M && area[k * M + n] > 0.0)
            n++;
        for (Py_ssize_t m = n; m < M; m++)
            if (area[k * M + m] != 0.0) {
                value_error("native contact read: %s area of pad %d: padding (area 0) must trail the valid "
                            "points, point %zd has area %g", which, k, m, area[k * M + m]);
                return 0;
            }
        g->nvalid[k] = (int)n;
        /* the rim's groups: consecutive [start, end) ranges ending at nvalid (padding rows: end <= start) */
        const double *gr = D(g->groups) + (Py_ssize_t)k * g->R * 6;
        int ng = 0;
        while (ng < g->R && gr[6 * ng + 1] > gr[6 * ng])
            ng++;
        int at = ng > 0 ? (int)gr[0] : (int)n;
        g->npix[k] = at;
        for (int j = 0; j < ng; j++) {
            const double a = gr[6 * j], e = gr[6 * j + 1];
            if (a != (double)at || e > (double)n || !(gr[6 * j + 5] >= 0.0)) {
                value_error("native contact read: %s rim groups of pad %d: group %d is [%g, %g) radius %g; the "
                            "groups must follow each other up to the %zd valid points, radii >= 0", which, k, j, a, e,
                            gr[6 * j + 5], n);
                return 0;
            }
            at = (int)e;
        }
        if (at != (int)n) {
            value_error("native contact read: %s rim groups of pad %d end at point %d, the pad has %zd valid points",
                        which, k, at, n);
            return 0;
        }
        g->ngroups[k] = ng;
    }
    for (Py_ssize_t i = 0; i < NPAD * M; i++)
        if (px[i] < 0 || px[i] >= NPX) {
            PyErr_Format(PyExc_ValueError, "native contact read: %s pixel[%zd] = %lld outside 0..%d", which, i,
                         px[i], NPX - 1);
            return 0;
        }
    return 1;
}

/* Reader(coarse: 7 arrays, fine: 7 arrays, geom_type, geom_size, distal_bodies, slot_normals, stiffness,
 *        coarse_first_k, fine_first_k) */
static int Reader_init(Reader *r, PyObject *args, PyObject *kw)
{
    PyObject *o[14], *gt, *gs, *db, *sn;
    double stiffness;
    int first_k[2];
    if (kw != NULL && PyDict_Size(kw) > 0) {
        PyErr_SetString(PyExc_TypeError, "Reader() takes positional arguments only");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOOOOdii:Reader", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
                          &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &gt, &gs, &db, &sn, &stiffness, &first_k[0],
                          &first_k[1]))
        return -1;
    /* a second __init__ replaces every table */
    r->ready = 0;
    grid_release(&r->grid[0]);
    grid_release(&r->grid[1]);
    release(&r->geom_type);
    release(&r->geom_size);
    release(&r->distal_bodies);
    release(&r->slot_normals);
    reader_release_extraction(r);
    if (!(stiffness > 0)) {
        value_error("native contact read: stiffness must be > 0 N/m^3, got %g", stiffness);
        return -1;
    }
    if (first_k[0] < 1 || first_k[1] < 1) {
        value_error("native contact read: the first support sizes must be >= 1, got %d and %d", first_k[0],
                    first_k[1]);
        return -1;
    }
    Py_ssize_t any1[1] = {-1};
    if (!get_view(sn, &r->slot_normals, "slot_normals", 'd', 3, (Py_ssize_t[]){NPAD, -1, 3}, 1, 0))
        return -1;
    r->S = r->slot_normals.shape[1];
    if (r->S < 1 || r->S > MAX_SLOTS) {
        PyErr_Format(PyExc_ValueError, "native contact read: slot_normals has %zd slots per pad (1..%d)", r->S,
                     MAX_SLOTS);
        return -1;
    }
    if (!get_view(gt, &r->geom_type, "geom_type", 'i', 1, any1, 1, 0))
        return -1;
    r->G = r->geom_type.shape[0];
    if (!get_view(gs, &r->geom_size, "geom_size", 'd', 2, (Py_ssize_t[]){r->G, 3}, 1, 0))
        return -1;
    if (!get_view(db, &r->distal_bodies, "distal_bodies", 'q', 1, (Py_ssize_t[]){NPAD}, 1, 0))
        return -1;
    r->max_body = 0;
    for (int k = 0; k < NPAD; k++) {
        long long b = Q64(r->distal_bodies)[k];
        if (b < 0) {
            PyErr_Format(PyExc_ValueError, "native contact read: distal body of pad %d is %lld (< 0)", k, b);
            return -1;
        }
        if (b > r->max_body)
            r->max_body = (Py_ssize_t)b;
    }
    if (!grid_init(&r->grid[0], o, "coarse", r->S) || !grid_init(&r->grid[1], o + 7, "fine", r->S))
        return -1;
    r->grid[0].first_k = first_k[0];
    r->grid[1].first_k = first_k[1];
    r->inv_stiffness = 1.0 / stiffness;
    r->configured = 0;
    r->ready = 1;
    return 0;
}

/* configure(pair_code, code_pad, code_sign, code_body, code_slots, slot_info, code_slot0, taxel_slot,
 *           taxel_rot, pad_rot, side_sign) */
static PyObject *Reader_configure(Reader *r, PyObject *args)
{
    PyObject *o[10];
    double side;
    if (!r->ready) {
        PyErr_SetString(PyExc_ValueError, "native contact read: the Reader's tables were not set (__init__ failed)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOd:configure", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7],
                          &o[8], &o[9], &side))
        return NULL;
    reader_release_extraction(r);
    Py_ssize_t G1 = r->G + 1, S = r->S;
    Py_ssize_t n11[1] = {NCODE};
    if (!get_view(o[0], &r->pair_code, "pair_code", 'q', 1, (Py_ssize_t[]){G1 * G1}, 1, 0)
        || !get_view(o[1], &r->code_pad, "code_pad", 'q', 1, n11, 1, 0)
        || !get_view(o[2], &r->code_sign, "code_sign", 'd', 1, n11, 1, 0)
        || !get_view(o[3], &r->code_body, "code_body", 'q', 1, n11, 1, 0)
        || !get_view(o[4], &r->code_slots, "code_slots", 'd', 3, (Py_ssize_t[]){NCODE, S, 3}, 1, 0)
        || !get_view(o[5], &r->slot_info, "slot_info", 'd', 2, (Py_ssize_t[]){NPAD * S, 4}, 1, 0)
        || !get_view(o[6], &r->code_slot0, "code_slot0", 'q', 1, n11, 1, 0)
        || !get_view(o[7], &r->taxel_slot, "taxel_slot", 'q', 1, (Py_ssize_t[]){-1}, 1, 0))
        goto fail;
    r->N = r->taxel_slot.shape[0];
    if (!get_view(o[8], &r->taxel_rot, "taxel_rot", 'd', 3, (Py_ssize_t[]){r->N, 3, 3}, 1, 0)
        || !get_view(o[9], &r->pad_rot, "pad_rot", 'd', 2, (Py_ssize_t[]){3, 3}, 1, 0))
        goto fail;
    for (Py_ssize_t i = 0; i < G1 * G1; i++) {
        long long c = Q64(r->pair_code)[i];
        if (c < -NPAD || c > NPAD) {
            PyErr_Format(PyExc_ValueError, "native contact read: pair_code[%zd] = %lld outside -5..5", i, c);
            goto fail;
        }
    }
    for (int c = 0; c < NCODE; c++) {
        long long pad = Q64(r->code_pad)[c], body = Q64(r->code_body)[c], s0 = Q64(r->code_slot0)[c];
        if (c == 0)
            continue;
        if (pad < 0 || pad >= NPAD || body < 0 || s0 != pad * S) {
            PyErr_Format(PyExc_ValueError, "native contact read: code %d maps to pad %lld, body %lld, first slot %lld "
                         "(pad must be 0..4, body >= 0, first slot = pad * %zd)", c, pad, body, s0, S);
            goto fail;
        }
        if (body > r->max_body)
            r->max_body = (Py_ssize_t)body;
    }
    for (Py_ssize_t i = 0; i < r->N; i++) {
        long long s = Q64(r->taxel_slot)[i];
        if (s < 0 || s >= NPAD * S) {
            PyErr_Format(PyExc_ValueError, "native contact read: taxel_slot[%zd] = %lld outside 0..%zd", i, s,
                         NPAD * S - 1);
            goto fail;
        }
    }
    r->side_sign = side;
    r->configured = 1;
    Py_RETURN_NONE;
fail:
    reader_release_extraction(r);
    return NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Signed distances (contact_model.signed_distance, _ellipsoid_distance)
 * ------------------------------------------------------------------------------------------- */

static inline double sdf_of(int t, double s0, double s1, double s2, double x, double y, double z)
{
    switch (t) {
    case G_PLANE:
        return z;
    case G_SPHERE:
        return sqrt(x * x + y * y + z * z) - s0;
    case G_CAPSULE: {
        double c = z < -s1 ? -s1 : (z > s1 ? s1 : z);
        double dz = z - c;
        return sqrt(x * x + y * y + dz * dz) - s0;
    }
    case G_CYLINDER: {
        double d0 = hypot(x, y) - s0, d1 = fabs(z) - s1;
        double in = d0 > d1 ? d0 : d1;
        if (in > 0.0)
            in = 0.0;
        return in + hypot(d0 > 0.0 ? d0 : 0.0, d1 > 0.0 ? d1 : 0.0);
    }
    case G_BOX: {
        double qx = fabs(x) - s0, qy = fabs(y) - s1, qz = fabs(z) - s2;
        double in = qx;
        if (qy > in)
            in = qy;
        if (qz > in)
            in = qz;
        if (in > 0.0)
            in = 0.0;
        qx = qx > 0.0 ? qx : 0.0;
        qy = qy > 0.0 ? qy : 0.0;
        qz = qz > 0.0 ? qz : 0.0;
        return sqrt(qx * qx + qy * qy + qz * qz) + in;
    }
    case G_ELLIPSOID: {
        double a0 = s0 * s0, a1 = s1 * s1, a2 = s2 * s2;
        double amin = a0 < a1 ? a0 : a1;
        if (a2 < amin)
            amin = a2;
        double lo = -amin * (1.0 - 1e-12);
        double t0 = s0 * fabs(x) - a0, t1 = s1 * fabs(y) - a1, t2 = s2 * fabs(z) - a2;
        double tt = t0 > t1 ? t0 : t1;
        if (t2 > tt)
            tt = t2;
        if (lo > tt)
            tt = lo;
        double sx = s0 * x, sy = s1 * y, sz = s2 * z;
        for (int it = 0; it < ELLIPSOID_ITERATIONS; it++) {
            double d0 = tt + a0, d1 = tt + a1, d2 = tt + a2;
            double q0 = sx / d0, q1 = sy / d1, q2 = sz / d2;
            double q20 = q0 * q0, q21 = q1 * q1, q22 = q2 * q2;
            double r2 = q20 + q21 + q22;
            double rr = sqrt(r2);
            double den = q20 / d0 + q21 / d1 + q22 / d2;
            if (den < 1e-300)
                den = 1e-300;
            tt = tt - (1.0 - rr) * r2 / den;
            if (lo > tt)
                tt = lo;
        }
        double u0 = x / (tt + a0), u1 = y / (tt + a1), u2 = z / (tt + a2);
        return tt * sqrt(u0 * u0 + u1 * u1 + u2 * u2);
    }
    }
    return NAN;
}

/* Signed distances of the n points ph (coordinate-major rows x, y, z, 1 of length M, distal
 * frame) mapped by T (3 × 4, distal → geom) to a geom of type t: one loop per type, without
 * branches, so the compiler vectorises it (the same arithmetic as `sdf_of`). */
static void sdf_points(int t, double s0, double s1, double s2, const double *restrict Tp,
                       const double *restrict ph, Py_ssize_t M, int n, double *restrict out)
{
    const double *restrict X = ph, *restrict Y = ph + M, *restrict Z = ph + 2 * M, *restrict W = ph + 3 * M;
    double T[12];
    memcpy(T, Tp, sizeof T);
#define LOCAL                                                                    \
    const double px = X[m], py = Y[m], pz = Z[m], pw = W[m];                    \
    const double x = T[0] * px + T[1] * py + T[2] * pz + T[3] * pw;             \
    const double y = T[4] * px + T[5] * py + T[6] * pz + T[7] * pw;             \
    const double z = T[8] * px + T[9] * py + T[10] * pz + T[11] * pw;
    switch (t) {
    case G_BOX:
        for (int m = 0; m < n; m++) {
            LOCAL
            double qx = fabs(x) - s0, qy = fabs(y) - s1, qz = fabs(z) - s2;
            double in = qx > qy ? qx : qy;
            in = in > qz ? in : qz;
            in = in < 0.0 ? in : 0.0;
            qx = qx > 0.0 ? qx : 0.0;
            qy = qy > 0.0 ? qy : 0.0;
            qz = qz > 0.0 ? qz : 0.0;
            out[m] = sqrt(qx * qx + qy * qy + qz * qz) + in;
        }
        return;
    case G_SPHERE:
        for (int m = 0; m < n; m++) {
            LOCAL
            out[m] = sqrt(x * x + y * y + z * z) - s0;
        }
        return;
    case G_CAPSULE:
        for (int m = 0; m < n; m++) {
            LOCAL
            double c = z < -s1 ? -s1 : z;
            c = c > s1 ? s1 : c;
            const double dz = z - c;
            out[m] = sqrt(x * x + y * y + dz * dz) - s0;
        }
        return;
    case G_PLANE:
        for (int m = 0; m < n; m++) {
            LOCAL
            (void)x, (void)y;
            out[m] = z;
        }
        return;
    default:
        for (int m = 0; m < n; m++) {
            LOCAL
            out[m] = sdf_of(t, s0, s1, s2, x, y, z);
        }
    }
#undef LOCAL
}

/* An upper bound on the level λ (Σ A·max(λ − sdf, 0) = V) of n points, tighter than λ₀ = smin +
 * V / A_closest: the points with sdf below smin + h carry V once λ ≥ smin + h + V / A(h), A(h)
 * their area; h scanned on 64 buckets of [smin, bound), three times on the shrinking range. Every
 * point above the bound is inactive; the margins only add candidates (harmless). */
static double level_bound(const double *sdf, const double *area, int n, double smin, double vol, double amin)
{
    double bound = smin + vol / amin;
    for (int pass = 0; pass < 3; pass++) {
        const double H = bound - smin;
        if (!(H > 0.0) || !isfinite(H))
            break;
        double A[64] = {0.0};
        const double scale = 64.0 / H;
        for (int m = 0; m < n; m++) {
            const double d = (sdf[m] - smin) * scale;
            if (d < 64.0)
                A[(int)d] += area[m];
        }
        double acc = 0.0, best = bound;
        for (int b = 0; b < 64; b++) {
            acc += A[b];
            if (acc > 0.0) {
                const double c = smin + ((b + 1) * (H / 64.0) + vol / acc) * (1.0 + 1e-9);
                best = c < best ? c : best;
            }
        }
        if (!(best < bound))
            break;
        bound = best;
    }
    return bound + 1e-300;
}

/* ---------------------------------------------------------------------------------------------
 * One frame's pairs and their solution
 * ------------------------------------------------------------------------------------------- */

typedef struct {
    int pad, geom;
    double f[3];       /* force ON the pad, distal frame [N] */
    double fn;         /* normal force [N] */
    double ex[7];      /* Σ normal force vector (distal), Σ μ·F_n, Σ F_n·contact point (world) */
    double fn_vec[3];  /* normal part of f (distal) */
    double mu;
    double stuck;
    double t_hat[3];
    double pn_sum, q_sum;  /* Σ P and Σ Q over the footprint [N] (the sensed shares' denominators) */
} Pair;

typedef struct {
    double s;
    int i;
} Pt;

/* Hoare partition of a[lo..hi] around the median of three: afterwards a[lo..*j] ≤ pivot ≤
 * a[*i..hi] (*j < *i). Shared by the sort and the selection. */
static inline void partition(Pt *a, int lo, int hi, int *pi, int *pj)
{
    int mid = lo + (hi - lo) / 2;
    double x = a[lo].s, y = a[mid].s, z = a[hi].s;
    double piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int i = lo, j = hi;
    while (i <= j) {
        while (a[i].s < piv)
            i++;
        while (a[j].s > piv)
            j--;
        if (i <= j) {
            Pt tmp = a[i];
            a[i] = a[j];
            a[j] = tmp;
            i++;
            j--;
        }
    }
    *pi = i;
    *pj = j;
}

/* Sorts a[0..n) by increasing s (quicksort, insertion sort below 16; inline comparisons: the
 * library qsort's call per comparison costed more than the rest of the solve). */
static void sort_points(Pt *a, int n)
{
    int stack[128];
    int top = 0;
    int lo = 0, hi = n - 1;
    for (;;) {
        while (hi - lo >= 16) {
            int i, j;
            partition(a, lo, hi, &i, &j);
            /* the larger side on the stack, the smaller one next: depth ≤ log2(n) */
            if (j - lo < hi - i) {
                stack[top++] = i;
                stack[top++] = hi;
                hi = j;
            } else {
                stack[top++] = lo;
                stack[top++] = j;
                lo = i;
            }
        }
        for (int i = lo + 1; i <= hi; i++) {
            Pt v = a[i];
            int j = i - 1;
            while (j >= lo && a[j].s > v.s) {
                a[j + 1] = a[j];
                j--;
            }
            a[j + 1] = v;
        }
        if (top == 0)
            break;
        hi = stack[--top];
        lo = stack[--top];
    }
}

/* Reorders a[0..n) so that a[0..k) hold the k smallest s (Hoare quickselect). */
static void select_lowest(Pt *a, int n, int k)
{
    int lo = 0, hi = n - 1;
    const int t = k - 1;
    while (lo < hi) {
        int i, j;
        partition(a, lo, hi, &i, &j);
        if (t <= j)
            hi = j;
        else if (t >= i)
            lo = i;
        else
            break;
    }
}

typedef struct {
    Pt *pts;          /* (M,) candidate points of one pair */
    double *sdf;      /* (M,) */
    int *ri;          /* (M,) the evaluated rim points' indices (`solve_pair`) */
    double *w, *a, *ca, *Pn, *C, *Qv, *pres, *cc;   /* (M,) along the sorted support */
    double *tl;       /* (M, 3) point forces (images) */
    double *sn, *sq;  /* (P, S) each pair's normal and friction influence sums */
} Work;

static void work_free(Work *w)
{
    free(w->pts);
    free(w->sdf);
    free(w->ri);
    free(w->w);
    free(w->tl);
    free(w->sn);
    memset(w, 0, sizeof *w);
}

static int work_alloc(Work *w, Py_ssize_t M, Py_ssize_t P, Py_ssize_t S)
{
    memset(w, 0, sizeof *w);
    if (M < 1)
        M = 1;
    w->pts = malloc(sizeof(Pt) * M);
    w->sdf = malloc(sizeof(double) * M);
    w->ri = malloc(sizeof(int) * M);
    w->w = malloc(sizeof(double) * M * 8);
    w->tl = malloc(sizeof(double) * M * 3);
    w->sn = calloc((size_t)(P > 0 ? P : 1) * S * 2, sizeof(double));
    if (!w->pts || !w->sdf || !w->ri || !w->w || !w->tl || !w->sn) {
        work_free(w);
        PyErr_NoMemory();
        return 0;
    }
    w->a = w->w + M;
    w->ca = w->w + 2 * M;
    w->Pn = w->w + 3 * M;
    w->C = w->w + 4 * M;
    w->Qv = w->w + 5 * M;
    w->pres = w->w + 6 * M;
    w->cc = w->w + 7 * M;
    w->sq = w->sn + (P > 0 ? P : 1) * S;
    return 1;
}

/* MjData pose arrays (checked by the caller: G rows of geoms, more than max_body rows of bodies). */
typedef struct {
    Py_buffer xmat, xpos, gxmat, gxpos;
} Poses;

/* The footprint (level solve), stick and slip, influence sums and (img != NULL) the image scatter
 * of pair p. Returns 0 with an exception set on error. */
static int solve_pair(Reader *r, const Grid *g, const Poses *ps, Pair *pr, Work *wk, Py_ssize_t p, double *img,
                      const double *rot)
{
    const Py_ssize_t M = g->M, S = r->S;
    const int k = pr->pad, geom = pr->geom;
    const int t = P1(r->geom_type, int, geom);
    if (t != G_PLANE && t != G_SPHERE && t != G_CAPSULE && t != G_CYLINDER && t != G_BOX && t != G_ELLIPSOID) {
        PyErr_Format(PyExc_ValueError, "no signed distance for MuJoCo geom type %d", t);
        return 0;
    }
    const double s0 = D(r->geom_size)[3 * geom], s1 = D(r->geom_size)[3 * geom + 1], s2 = D(r->geom_size)[3 * geom + 2];
    /* distal → geom: T = Rgᵀ·[Rd | xd − xg] */
    const long long b = Q64(r->distal_bodies)[k];
    double Rd[9], Rg[9], B[12], T[12];
    for (int i = 0; i < 9; i++) {
        Rd[i] = P2(ps->xmat, double, b, i);
        Rg[i] = P2(ps->gxmat, double, geom, i);
    }
    for (int i = 0; i < 3; i++) {
        B[4 * i] = Rd[3 * i];
        B[4 * i + 1] = Rd[3 * i + 1];
        B[4 * i + 2] = Rd[3 * i + 2];
        B[4 * i + 3] = P2(ps->xpos, double, b, i) - P2(ps->gxpos, double, geom, i);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            T[4 * i + j] = Rg[i] * B[j] + Rg[3 + i] * B[4 + j] + Rg[6 + i] * B[8 + j];
    const double *ph = D(g->points_h) + (Py_ssize_t)k * 4 * M;
    const double *area = D(g->area) + (Py_ssize_t)k * M;
    const int npix = g->npix[k];
    double *sdf = wk->sdf;
    const double vol = pr->fn * r->inv_stiffness + MIN_VOLUME;
    sdf_points(t, s0, s1, s2, T, ph, M, npix, sdf);
    /* The rim: its points lie beyond the pad's sides and carry load only when the footprint
     * reaches there. The pixels alone bound the level from above (more points only lower it), and
     * a signed distance is 1-Lipschitz, so a group whose centre lies more than its radius above that
     * bound holds no active point and is left out. The evaluated points are packed after the
     * pixels (sdf, and their areas in `parea`; `ri` their indices): the passes below run over
     * them only, and the active set — so the result — is the one of every point. */
    int n = npix;
    const double *parea = area;
    if (g->ngroups[k] > 0) {
        double pmin = INFINITY, pamin = 0.0;
        for (int m = 0; m < npix; m++)
            pmin = sdf[m] < pmin ? sdf[m] : pmin;
        for (int m = 0; m < npix; m++)
            if (sdf[m] == pmin && area[m] > pamin)
                pamin = area[m];
        const double bound = npix > 0 && isfinite(pmin) ? level_bound(sdf, area, npix, pmin, vol, pamin) : INFINITY;
        const double *gr = D(g->groups) + (Py_ssize_t)k * g->R * 6;
        double *pa = wk->a;        /* scratch until the support is sorted */
        memcpy(pa, area, sizeof(double) * npix);
        for (int j = 0; j < g->ngroups[k]; j++) {
            const double *q = gr + 6 * j;
            const int a0 = (int)q[0], e = (int)q[1];
            const double x = T[0] * q[2] + T[1] * q[3] + T[2] * q[4] + T[3];
            const double y = T[4] * q[2] + T[5] * q[3] + T[6] * q[4] + T[7];
            const double z = T[8] * q[2] + T[9] * q[3] + T[10] * q[4] + T[11];
            if (sdf_of(t, s0, s1, s2, x, y, z) - q[5] > bound + 1e-9)
                continue;
            sdf_points(t, s0, s1, s2, T, ph + a0, M, e - a0, sdf + n);
            for (int m = a0; m < e; m++) {
                pa[n] = area[m];
                wk->ri[n - npix] = m;
                n++;
            }
        }
        parea = pa;
    }
    double mn[4] = {INFINITY, INFINITY, INFINITY, INFINITY};    /* independent chains: no latency bound */
    int m4 = 0;
    for (; m4 + 4 <= n; m4 += 4)
        for (int u = 0; u < 4; u++)
            mn[u] = sdf[m4 + u] < mn[u] ? sdf[m4 + u] : mn[u];
    for (; m4 < n; m4++)
        mn[0] = sdf[m4] < mn[0] ? sdf[m4] : mn[0];
    double smin = mn[0];
    for (int u = 1; u < 4; u++)
        smin = mn[u] < smin ? mn[u] : smin;
    /* λ₀ = min sdf + V / A_closest ≥ the root (Φ(λ) = Σ A·max(λ − sdf, 0) is increasing): only
     * the points at or below λ₀ can be active. Of those, the K lowest (quickselect, K = the grid's
     * first_k, as the numpy path's first subset) sorted, and the exact level on them (`_level_sorted`:
     * cumulative sums, first segment that holds the volume); accepted when the subset's highest
     * point is not below λ, else K grows 4× (the numpy path's grown support). */
    int nc = 0;
    if (n > 0 && isfinite(smin)) {
        double amin = 0.0;
        for (int m = 0; m < n; m++)
            if (sdf[m] == smin && parea[m] > amin)
                amin = parea[m];
        const double lam0 = level_bound(sdf, parea, n, smin, vol, amin);
        for (int m = 0; m < n; m++)
            if (sdf[m] <= lam0) {
                wk->pts[nc].s = sdf[m];
                wk->pts[nc].i = m < npix ? m : wk->ri[m - npix];
                nc++;
            }
    }
    if (nc == 0) {
        PyErr_Format(PyExc_ValueError, "native contact read: pad %d, geom %d: no finite signed distance on the "
                     "pad's grid", k, geom);
        return 0;
    }
    double *a = wk->a, *ca = wk->ca, *w = wk->w;
    int K = g->first_k;
    double lam;
    for (;;) {
        if (K > nc)
            K = nc;
        if (K < nc)
            select_lowest(wk->pts, nc, K);
        sort_points(wk->pts, K);
        double c_a = 0.0, c_as = 0.0, ca_prev = 0.0, cas_prev = 0.0;
        int mcount = 0;
        for (int j = 0; j < K; j++) {
            double aj = area[wk->pts[j].i], sj = wk->pts[j].s;
            a[j] = aj;
            if (j > 0)
                mcount += sj * ca_prev - cas_prev < vol;
            c_a += aj;
            c_as += aj * sj;
            ca[j] = c_a;
            ca_prev = c_a;
            cas_prev = c_as;
            w[j] = c_as;    /* cumulative Σ a·s, for the level */
        }
        lam = (vol + w[mcount]) / ca[mcount];
        if (K == nc || wk->pts[K - 1].s >= lam)
            break;
        K *= 4;
    }
    while (K > 1 && !(lam - wk->pts[K - 1].s > 0.0))
        K--;            /* points without load change no sum */
    double wsum = 0.0;
    for (int j = 0; j < K; j++) {
        double d = lam - wk->pts[j].s;
        w[j] = (d > 0.0 ? d : 0.0) * a[j];
        wsum += w[j];
    }
    for (int j = 0; j < K; j++)
        w[j] /= wsum;
    /* `_traction_of` / `traction`: stick and slip, presorted by decreasing pressure */
    const double *iva = D(g->inv_area) + (Py_ssize_t)k * M;
    double ftv[3] = {pr->f[0] - pr->fn_vec[0], pr->f[1] - pr->fn_vec[1], pr->f[2] - pr->fn_vec[2]};
    const double ft = sqrt(ftv[0] * ftv[0] + ftv[1] * ftv[1] + ftv[2] * ftv[2]);
    const double fn = sqrt(pr->fn_vec[0] * pr->fn_vec[0] + pr->fn_vec[1] * pr->fn_vec[1] + pr->fn_vec[2] * pr->fn_vec[2]);
    const double mu = pr->mu;
    double *Pn = wk->Pn, *C = wk->C, *Qv = wk->Qv, *pres = wk->pres, *cc = wk->cc;
    double c_c = 0.0;
    for (int j = 0; j < K; j++) {
        Pn[j] = w[j] * fn;
        C[j] = Pn[j] * mu;
        pres[j] = C[j] * iva[wk->pts[j].i];
        c_c += C[j];
        cc[j] = c_c;
    }
    const double ctot = cc[K - 1];
    int m = 0;
    for (int j = 0; j < K; j++) {
        double at = pres[j] * (ca[j] - a[j]);
        at += ctot - (cc[j] - C[j]);
        m += at > ft;
    }
    const int gross = (m == 0) || (ft >= (1.0 - GROSS_SLIP_TOLERANCE) * ctot);
    const int kk = m - 1 > 0 ? m - 1 : 0;
    double s_ = (ft - ctot + cc[kk]) / (ca[kk] > 1e-300 ? ca[kk] : 1e-300);
    if (gross)
        s_ = 0.0;
    const double scale = ctot > 0 ? ft / ctot : 0.0;
    double foot = 0.0, held = 0.0, pn_sum = 0.0, q_sum = 0.0;
    for (int j = 0; j < K; j++) {
        double sA = s_ * a[j];
        int stuck;
        if (gross) {
            Qv[j] = C[j] * scale;
            stuck = 0;
        } else {
            Qv[j] = sA < C[j] ? sA : C[j];
            stuck = sA < C[j];
        }
        if (Pn[j] > 0) {
            foot += a[j];
            if (stuck)
                held += a[j];
        }
        pn_sum += Pn[j];
        q_sum += Qv[j];
    }
    pr->stuck = foot > 0 ? held / foot : 1.0;
    pr->pn_sum = pn_sum;
    pr->q_sum = q_sum;
    const double ftm = ft > 1e-300 ? ft : 1e-300;
    for (int i = 0; i < 3; i++)
        pr->t_hat[i] = ftv[i] / ftm;
    /* the pair's influence sums Σ G·P and Σ G·Q (`_pair_readings`' product) */
    double *sn = wk->sn + p * S, *sq = wk->sq + p * S;
    const double *GT = D(g->GT) + (Py_ssize_t)k * M * S;
    for (int j = 0; j < K; j++) {
        const double *gr = GT + (Py_ssize_t)wk->pts[j].i * S;
        const double pn = Pn[j], q = Qv[j];
        for (Py_ssize_t l = 0; l < S; l++) {
            sn[l] += pn * gr[l];
            sq[l] += q * gr[l];
        }
    }
    if (img != NULL) {
        /* `_point_forces` + `solution_images`: pressure along each point's normal, friction in its
         * tangent plane, the pair's remainder spread with the pressure; turned into the pad axes. */
        const double *nrm = D(g->normal) + (Py_ssize_t)k * M * 3;
        const long long *pix = Q64(g->pixel) + (Py_ssize_t)k * M;
        const double *th = pr->t_hat;
        double sum[3] = {0.0, 0.0, 0.0};
        double *tl = wk->tl;
        for (int j = 0; j < K; j++) {
            const double *nv = nrm + 3 * wk->pts[j].i;
            double d = nv[0] * th[0] + nv[1] * th[1] + nv[2] * th[2];
            double v0 = th[0] - d * nv[0], v1 = th[1] - d * nv[1], v2 = th[2] - d * nv[2];
            double nn = sqrt(v0 * v0 + v1 * v1 + v2 * v2);
            if (nn < 1e-300)
                nn = 1e-300;
            v0 /= nn, v1 /= nn, v2 /= nn;
            v0 *= Qv[j], v1 *= Qv[j], v2 *= Qv[j];
            v0 -= Pn[j] * nv[0], v1 -= Pn[j] * nv[1], v2 -= Pn[j] * nv[2];
            tl[3 * j] = v0, tl[3 * j + 1] = v1, tl[3 * j + 2] = v2;
            sum[0] += v0, sum[1] += v1, sum[2] += v2;
        }
        double rem[3] = {pr->f[0] - sum[0], pr->f[1] - sum[1], pr->f[2] - sum[2]};
        double *base = img + (Py_ssize_t)k * 3 * NPX;
        for (int j = 0; j < K; j++) {
            double v0 = tl[3 * j] + w[j] * rem[0], v1 = tl[3 * j + 1] + w[j] * rem[1],
                   v2 = tl[3 * j + 2] + w[j] * rem[2];
            long long px = pix[wk->pts[j].i];
            for (int c = 0; c < 3; c++)
                base[c * NPX + px] += v0 * rot[c] + v1 * rot[3 + c] + v2 * rot[6 + c];
        }
    }
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * The final stage: per-pair influence sums → taxel vectors → each pad's remainder placed inside
 * the taxels' friction cones (`DistributedContact._pair_readings` + `_pad_readings`,
 * `contact_model.cone_capacity` / `cone_spread`): cone_capacity1, cone_spread1, final_stage. Kept
 * apart: its formula may change on its own. In: P pairs (pad, t_hat, force, μ, Σ P, Σ Q) with their
 * normal and friction sums sn, sq (P, S); the taxel slot normals (5, S, 3). Out: out (5, S, 3) [N,
 * distal frame] and unsensed (5, 3) [N, distal frame], zeroed here. A pair's sensed force is its
 * force with the normal part scaled by σ_n = Σ sn / Σ P and the friction part by σ_t = Σ sq / Σ Q
 * (`_pair_readings`); the rest is its pad's unsensed load, and the remainder is taken against the
 * sensed force.
 * ------------------------------------------------------------------------------------------- */
/* `contact_model.cone_capacity` for one taxel: the largest ω ≥ 0 for which r + ω·R stays inside
 * the cone |shear| ≤ μ·normal (+inf when no ω leaves it); n the outward unit normal. */
static double cone_capacity1(const double *rv, const double *n, const double *R, double mu)
{
    const double k = 1.0 + mu * mu;
    const double rn = -(n[0] * R[0] + n[1] * R[1] + n[2] * R[2]);
    const double nu = -(rv[0] * n[0] + rv[1] * n[1] + rv[2] * n[2]);
    const double a = (R[0] * R[0] + R[1] * R[1] + R[2] * R[2]) - k * rn * rn;
    const double b = (rv[0] * R[0] + rv[1] * R[1] + rv[2] * R[2]) - k * nu * rn;
    double c = (rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2]) - k * nu * nu;
    c = c < 0.0 ? c : 0.0;
    const double disc = b * b - a * c;
    const double root = sqrt(disc > 0.0 ? disc : 0.0);
    const double den = b + root;
    if (b < 0)
        return a > 0 ? (root - b) / a : INFINITY;
    if (disc >= 0 && den > 0)
        return -c / den;
    return a > 0 ? 0.0 : INFINITY;
}

typedef struct {
    double b;
    int j;
} Brk;

/* `contact_model.cone_spread` for one pad: the weights ω (S,) of its remainder R over its taxels
 * (readings r (S, 3), normal loads N (S,), outward normals (S, 3), friction coefficients μ (S,)):
 * Σ ω = 1; water-filling on the normal-load shares up to each taxel's cone capacity. Returns 1
 * when the cones cannot take R along R (ω is then capacity + the rest by load, and the caller
 * moves the readings: nearest_in_cones1), else 0. */
static int cone_spread1(const double *r, const double *N, const double *normals, const double *mu, const double *R,
                         Py_ssize_t S, double *omega)
{
    double total = 0.0;
    for (Py_ssize_t j = 0; j < S; j++)
        total += N[j];
    const double inv = 1.0 / (total > 0 ? total : 1.0);
    double share[MAX_SLOTS], cap[MAX_SLOTS];
    const double Rn = sqrt(R[0] * R[0] + R[1] * R[1] + R[2] * R[2]);
    int fits = 1;
    for (Py_ssize_t j = 0; j < S; j++) {
        share[j] = N[j] * inv;     /* 0 where no load */
        const double *rv = r + 3 * j;
        double sh = rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2] - N[j] * N[j];
        sh = sqrt(sh > 0.0 ? sh : 0.0);
        if (!(share[j] * (Rn * (1.0 + mu[j])) <= mu[j] * N[j] - sh))
            fits = 0;
    }
    if (!fits) {
        int binds = 0;
        for (Py_ssize_t j = 0; j < S; j++) {
            cap[j] = share[j] > 0 ? cone_capacity1(r + 3 * j, normals + 3 * j, R, mu[j]) : 0.0;
            binds |= !(share[j] <= cap[j]);
        }
        if (binds) {
            Brk br[MAX_SLOTS];
            for (Py_ssize_t j = 0; j < S; j++) {
                br[j].b = share[j] > 0 ? cap[j] / share[j] : INFINITY;
                br[j].j = (int)j;
            }
            for (Py_ssize_t i = 1; i < S; i++) {      /* insertion sort by breakpoint (S ≤ 64) */
                Brk v = br[i];
                Py_ssize_t m = i - 1;
                while (m >= 0 && br[m].b > v.b) {
                    br[m + 1] = br[m];
                    m--;
                }
                br[m + 1] = v;
            }
            double rest[MAX_SLOTS + 1];
            rest[S] = 0.0;
            for (Py_ssize_t i = S - 1; i >= 0; i--)
                rest[i] = rest[i + 1] + share[br[i].j];
            double capped = 0.0, level = 0.0;
            int feasible = 0;
            for (Py_ssize_t i = 0; i < S; i++) {
                /* the first i (in breakpoint order) capped: L = (1 − Σ_{<i} ω*) / Σ_{≥i} s, valid if L ≤ b_i */
                const double lev = (1.0 - capped) / rest[i];
                if (rest[i] > 0 && lev <= br[i].b) {
                    level = lev;
                    feasible = 1;
                    break;
                }
                const double c = cap[br[i].j];
                capped += isfinite(c) ? c : 0.0;
            }
            if (!feasible && total > 0) {    /* the cones cannot take R: capacity + the rest by load */
                double csum = 0.0;
                for (Py_ssize_t j = 0; j < S; j++)
                    csum += cap[j];
                for (Py_ssize_t j = 0; j < S; j++)
                    omega[j] = cap[j] + (1.0 - csum) * share[j];
                return 1;
            }
            for (Py_ssize_t j = 0; j < S; j++) {
                const double l = level * share[j];
                omega[j] = cap[j] < l ? cap[j] : l;
            }
            return 0;
        }
    }
    for (Py_ssize_t j = 0; j < S; j++)      /* no cone binds: the plain spread with the normal loads */
        omega[j] = share[j];
    return 0;
}

/* `contact_model._onto_cones` for one taxel: x projected onto its cone, into y. */
static void onto_cone1(const double *x, const double *n, double mu, double *y)
{
    const double nu = -(x[0] * n[0] + x[1] * n[1] + x[2] * n[2]);
    const double t[3] = {x[0] + nu * n[0], x[1] + nu * n[1], x[2] + nu * n[2]};
    const double tn = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    if (tn <= mu * nu) {
        y[0] = x[0], y[1] = x[1], y[2] = x[2];
        return;
    }
    double alpha = nu + mu * tn;
    alpha = (alpha > 0.0 ? alpha : 0.0) / (1.0 + mu * mu);
    const double inv = 1.0 / (tn > 0.0 ? tn : 1.0);
    for (int i = 0; i < 3; i++)
        y[i] = alpha * (mu * t[i] * inv - n[i]);
}

/* `contact_model._cone_jacobians` for one taxel: the derivative of onto_cone1 at x, added to H (3 × 3). */
static void add_cone_jacobian1(const double *x, const double *n, double mu, double *H)
{
    const double nu = -(x[0] * n[0] + x[1] * n[1] + x[2] * n[2]);
    const double t[3] = {x[0] + nu * n[0], x[1] + nu * n[1], x[2] + nu * n[2]};
    const double tn = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    if (tn <= mu * nu) {                 /* inside: the identity */
        H[0] += 1.0, H[4] += 1.0, H[8] += 1.0;
        return;
    }
    if (mu * tn <= -nu)                  /* in the polar cone: 0 */
        return;
    const double th[3] = {t[0] / tn, t[1] / tn, t[2] / tn};
    const double w[3] = {mu * th[0] - n[0], mu * th[1] - n[1], mu * th[2] - n[2]};
    double alpha = nu + mu * tn;
    alpha = (alpha > 0.0 ? alpha : 0.0) / (1.0 + mu * mu);
    const double c = alpha * mu / tn, k = 1.0 / (1.0 + mu * mu);
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            H[3 * r + q] += w[r] * w[q] * k + c * ((r == q) - n[r] * n[q] - th[r] * th[q]);
}

/* ψ's pieces for one pad at λ (`contact_model.nearest_in_cones`): the loaded taxels' projections
 * p (S, 3) of x + λ, the gradient g = Σ p − T, and ψ = Σ ½|p|² − λ·T. */
static double cone_dual1(const double *x, const double *N, const double *normals, const double *mu, Py_ssize_t S,
                         const double *target, const double *lam, double *p, double *g)
{
    double psi = -(lam[0] * target[0] + lam[1] * target[1] + lam[2] * target[2]);
    g[0] = -target[0], g[1] = -target[1], g[2] = -target[2];
    for (Py_ssize_t j = 0; j < S; j++) {
        if (!(N[j] > 0))
            continue;
        const double z[3] = {x[3 * j] + lam[0], x[3 * j + 1] + lam[1], x[3 * j + 2] + lam[2]};
        double *pj = p + 3 * j;
        onto_cone1(z, normals + 3 * j, mu[j], pj);
        g[0] += pj[0], g[1] += pj[1], g[2] += pj[2];
        psi += 0.5 * (pj[0] * pj[0] + pj[1] * pj[1] + pj[2] * pj[2]);
    }
    return psi;
}

static double max_abs3(const double *v)
{
    double m = fabs(v[0]);
    m = fabs(v[1]) > m ? fabs(v[1]) : m;
    return fabs(v[2]) > m ? fabs(v[2]) : m;
}

/* `contact_model.nearest_in_cones` for one pad: the readings x (S, 3) moved, in place, to the
 * nearest ones with the same sum and every loaded taxel (N > 0) inside its cone — Newton steps on
 * the 3-D dual λ, the same steps, regularisation and backtracking as there; left as they were
 * when CONE_ITERATIONS do not get the sum within CONE_TOLERANCE × the largest reading component. */
#define CONE_TOLERANCE 1e-13
#define CONE_ITERATIONS 50
#define CONE_HALVINGS 40
static void nearest_in_cones1(double *x, const double *N, const double *normals, const double *mu, Py_ssize_t S)
{
    double p[MAX_SLOTS * 3], pk[MAX_SLOTS * 3], target[3] = {0.0, 0.0, 0.0}, scale = 0.0;
    double lam[3] = {0.0, 0.0, 0.0}, g[3], gk[3];
    Py_ssize_t loaded = 0;
    for (Py_ssize_t j = 0; j < S; j++) {
        for (int i = 0; i < 3; i++) {
            scale = fabs(x[3 * j + i]) > scale ? fabs(x[3 * j + i]) : scale;
            if (N[j] > 0)
                target[i] += x[3 * j + i];
        }
        loaded += N[j] > 0;
    }
    if (loaded == 0)
        return;
    double psi = cone_dual1(x, N, normals, mu, S, target, lam, p, g);
    for (int it = 0; it <= CONE_ITERATIONS; it++) {
        const double residual = max_abs3(g);
        if (residual <= CONE_TOLERANCE * scale) {
            const double share = 1.0 / (double)loaded;
            for (Py_ssize_t j = 0; j < S; j++)
                if (N[j] > 0)
                    for (int i = 0; i < 3; i++)
                        x[3 * j + i] = p[3 * j + i] - share * g[i];
            return;
        }
        if (it == CONE_ITERATIONS)
            return;
        double H[9] = {0.0};
        for (Py_ssize_t j = 0; j < S; j++)
            if (N[j] > 0) {
                const double z[3] = {x[3 * j] + lam[0], x[3 * j + 1] + lam[1], x[3 * j + 2] + lam[2]};
                add_cone_jacobian1(z, normals + 3 * j, mu[j], H);
            }
        const double size = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        const double reg = size < scale ? size / scale : 1.0;
        H[0] += reg, H[4] += reg, H[8] += reg;
        /* step = −H⁻¹g (H symmetric positive definite: Σ PSD + reg·I), by cofactors */
        const double c00 = H[4] * H[8] - H[5] * H[7], c01 = H[5] * H[6] - H[3] * H[8], c02 = H[3] * H[7] - H[4] * H[6];
        const double det = H[0] * c00 + H[1] * c01 + H[2] * c02;
        const double inv[9] = {c00, H[2] * H[7] - H[1] * H[8], H[1] * H[5] - H[2] * H[4],
                               c01, H[0] * H[8] - H[2] * H[6], H[2] * H[3] - H[0] * H[5],
                               c02, H[1] * H[6] - H[0] * H[7], H[0] * H[4] - H[1] * H[3]};
        double step[3];
        for (int r = 0; r < 3; r++)
            step[r] = -(inv[3 * r] * g[0] + inv[3 * r + 1] * g[1] + inv[3 * r + 2] * g[2]) / det;
        const double slope = g[0] * step[0] + g[1] * step[1] + g[2] * step[2];
        double tau = 1.0;
        for (int h = 0; h < CONE_HALVINGS; h++) {
            const double at[3] = {lam[0] + tau * step[0], lam[1] + tau * step[1], lam[2] + tau * step[2]};
            const double sk = cone_dual1(x, N, normals, mu, S, target, at, pk, gk);
            if (sk <= psi + 1e-4 * tau * slope || max_abs3(gk) <= 0.5 * residual || h == CONE_HALVINGS - 1) {
                memcpy(lam, at, sizeof lam);
                memcpy(g, gk, sizeof g);
                memcpy(p, pk, sizeof(double) * (size_t)S * 3);
                psi = sk;
                break;
            }
            tau *= 0.5;
        }
    }
}

static void final_stage(Py_ssize_t P, const Pair *pairs, const double *sn_all, const double *sq_all,
                        const double *slot_normals, Py_ssize_t S, double *out, double *unsensed)
{
    double snp[NPAD * MAX_SLOTS];    /* each pad's normal sums (S ≤ MAX_SLOTS: checked by Reader()) */
    double mun[NPAD * MAX_SLOTS];    /* each pad's Σ μ·N per taxel */
    double force[NPAD][3], mu1[NPAD];
    int npairs[NPAD] = {0};
    memset(out, 0, sizeof(double) * NPAD * S * 3);
    memset(unsensed, 0, sizeof(double) * NPAD * 3);
    memset(force, 0, sizeof force);
    memset(snp, 0, sizeof snp);
    memset(mun, 0, sizeof mun);
    for (Py_ssize_t p = 0; p < P; p++) {
        const Pair *pr = &pairs[p];
        const int k = pr->pad;
        const double *sn = sn_all + p * S, *sq = sq_all + p * S, *th = pr->t_hat;
        const double *nrm = slot_normals + (Py_ssize_t)k * S * 3;
        double *o = out + (Py_ssize_t)k * S * 3;
        double ssn = 0.0, ssq = 0.0;
        for (Py_ssize_t j = 0; j < S; j++) {
            ssn += sn[j];
            ssq += sq[j];
        }
        const double lost_n = 1.0 - (pr->pn_sum > 0 ? ssn / pr->pn_sum : 0.0);
        const double lost_t = 1.0 - (pr->q_sum > 0 ? ssq / pr->q_sum : 0.0);
        for (int i = 0; i < 3; i++) {
            const double ft = pr->q_sum * th[i];
            const double u = lost_n * (pr->f[i] - ft) + lost_t * ft;
            unsensed[3 * k + i] += u;
            force[k][i] += pr->f[i] - u;
        }
        for (Py_ssize_t j = 0; j < S; j++) {
            const double *nv = nrm + 3 * j;
            double d = nv[0] * th[0] + nv[1] * th[1] + nv[2] * th[2];
            double v0 = th[0] - d * nv[0], v1 = th[1] - d * nv[1], v2 = th[2] - d * nv[2];
            double nn = sqrt(v0 * v0 + v1 * v1 + v2 * v2);
            if (nn < 1e-300)
                nn = 1e-300;
            v0 /= nn, v1 /= nn, v2 /= nn;
            o[3 * j] += v0 * sq[j] - sn[j] * nv[0];
            o[3 * j + 1] += v1 * sq[j] - sn[j] * nv[1];
            o[3 * j + 2] += v2 * sq[j] - sn[j] * nv[2];
            snp[k * S + j] += sn[j];
            mun[k * S + j] += pr->mu * sn[j];
        }
        npairs[k]++;
        mu1[k] = pr->mu;
    }
    for (int k = 0; k < NPAD; k++) {
        if (npairs[k] == 0)
            continue;      /* no pair: nothing to place (the block stays 0) */
        double *o = out + (Py_ssize_t)k * S * 3;
        double sum[3] = {0.0, 0.0, 0.0}, mu[MAX_SLOTS], omega[MAX_SLOTS];
        for (Py_ssize_t j = 0; j < S; j++) {
            sum[0] += o[3 * j], sum[1] += o[3 * j + 1], sum[2] += o[3 * j + 2];
            /* one pair: its μ; several: the load-weighted bound Σ μ_p·N_p / Σ N_p (1 without load) */
            mu[j] = npairs[k] == 1 ? mu1[k] : (snp[k * S + j] > 0 ? mun[k * S + j] / snp[k * S + j] : 1.0);
        }
        double rem[3] = {force[k][0] - sum[0], force[k][1] - sum[1], force[k][2] - sum[2]};
        const int outside = cone_spread1(o, snp + k * S, slot_normals + (Py_ssize_t)k * S * 3, mu, rem, S, omega);
        for (Py_ssize_t j = 0; j < S; j++) {
            o[3 * j] += omega[j] * rem[0], o[3 * j + 1] += omega[j] * rem[1], o[3 * j + 2] += omega[j] * rem[2];
        }
        if (outside)
            nearest_in_cones1(o, snp + k * S, slot_normals + (Py_ssize_t)k * S * 3, mu, S);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------------------------- */

static int get_poses(Reader *r, Poses *ps, PyObject *xmat, PyObject *xpos, PyObject *gxmat, PyObject *gxpos)
{
    ps->xmat.obj = ps->xpos.obj = ps->gxmat.obj = ps->gxpos.obj = NULL;
    if (!get_view(xmat, &ps->xmat, "data.xmat", 'd', 2, (Py_ssize_t[]){-1, 9}, 0, 0)
        || !get_view(xpos, &ps->xpos, "data.xpos", 'd', 2, (Py_ssize_t[]){ps->xmat.shape[0], 3}, 0, 0)
        || !get_view(gxmat, &ps->gxmat, "data.geom_xmat", 'd', 2, (Py_ssize_t[]){r->G, 9}, 0, 0)
        || !get_view(gxpos, &ps->gxpos, "data.geom_xpos", 'd', 2, (Py_ssize_t[]){r->G, 3}, 0, 0))
        return 0;
    if (ps->xmat.shape[0] <= r->max_body) {
        PyErr_Format(PyExc_ValueError, "native contact read: data.xmat has %zd bodies, the hand's distal bodies "
                     "need more than %zd", ps->xmat.shape[0], r->max_body);
        return 0;
    }
    return 1;
}

static void poses_release(Poses *ps)
{
    release(&ps->xmat);
    release(&ps->xpos);
    release(&ps->gxmat);
    release(&ps->gxpos);
}

/* Solve every pair; taxel slot table `slots_out` (5, S, 3), the pads' unsensed loads `unsensed_out`
 * (5, 3); images into img (may be NULL). */
static int solve_all(Reader *r, const Poses *ps, Pair *pairs, Py_ssize_t P, int fine, double *slots_out,
                     double *unsensed_out, double *img, const double *rot)
{
    const Grid *g = &r->grid[fine ? 1 : 0];
    Work wk;
    if (!work_alloc(&wk, g->M, P, r->S))
        return 0;
    for (Py_ssize_t p = 0; p < P; p++)
        if (!solve_pair(r, g, ps, &pairs[p], &wk, p, img, rot)) {
            work_free(&wk);
            return 0;
        }
    final_stage(P, pairs, wk.sn, wk.sq, D(r->slot_normals), r->S, slots_out, unsensed_out);
    work_free(&wk);
    return 1;
}

/* solve(pad (P,) int64, geom (P,) int64, f_loc (P,3), f_normal (P,), f_normal_vec (P,3), mu (P,),
 *       xmat, xpos, geom_xmat, geom_xpos, fine, slots_out (5·S,3), unsensed_out (5,3), stuck_out (P,),
 *       img (5,3,48,32)|None, rot (3,3)) */
static PyObject *Reader_solve(Reader *r, PyObject *args)
{
    PyObject *o[6], *xm, *xp, *gm, *gp, *so, *uo, *sto, *imo, *roto;
    int fine;
    if (!r->ready) {
        PyErr_SetString(PyExc_ValueError, "native contact read: the Reader's tables were not set (__init__ failed)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOpOOOOO:solve", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &xm, &xp, &gm,
                          &gp, &fine, &so, &uo, &sto, &imo, &roto))
        return NULL;
    Py_buffer v[6], out, uns, st, im, rot;
    Poses ps;
    Pair *pairs = NULL;
    PyObject *ret = NULL;
    for (int i = 0; i < 6; i++)
        v[i].obj = NULL;
    out.obj = uns.obj = st.obj = im.obj = rot.obj = NULL;
    ps.xmat.obj = ps.xpos.obj = ps.gxmat.obj = ps.gxpos.obj = NULL;
    if (!get_view(o[0], &v[0], "pad", 'q', 1, (Py_ssize_t[]){-1}, 0, 0))
        goto done;
    Py_ssize_t P = v[0].shape[0];
    if (!get_view(o[1], &v[1], "geom", 'q', 1, (Py_ssize_t[]){P}, 0, 0)
        || !get_view(o[2], &v[2], "f_loc", 'd', 2, (Py_ssize_t[]){P, 3}, 0, 0)
        || !get_view(o[3], &v[3], "f_normal", 'd', 1, (Py_ssize_t[]){P}, 0, 0)
        || !get_view(o[4], &v[4], "f_normal_vec", 'd', 2, (Py_ssize_t[]){P, 3}, 0, 0)
        || !get_view(o[5], &v[5], "mu", 'd', 1, (Py_ssize_t[]){P}, 0, 0)
        || !get_poses(r, &ps, xm, xp, gm, gp)
        || !get_view(so, &out, "slots_out", 'd', 2, (Py_ssize_t[]){NPAD * r->S, 3}, 1, 1)
        || !get_view(uo, &uns, "unsensed_out", 'd', 2, (Py_ssize_t[]){NPAD, 3}, 1, 1)
        || !get_view(sto, &st, "stuck_out", 'd', 1, (Py_ssize_t[]){P}, 1, 1)
        || !get_view(roto, &rot, "rot", 'd', 2, (Py_ssize_t[]){3, 3}, 1, 0))
        goto done;
    if (imo != Py_None && !get_view(imo, &im, "images_out", 'd', 4, (Py_ssize_t[]){NPAD, 3, IMG_ROWS, IMG_COLS}, 1, 1))
        goto done;
    pairs = calloc((size_t)(P > 0 ? P : 1), sizeof(Pair));
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t p = 0; p < P; p++) {
        long long pad = P1(v[0], long long, p), geom = P1(v[1], long long, p);
        if (pad < 0 || pad >= NPAD || geom < 0 || geom >= r->G) {
            PyErr_Format(PyExc_ValueError, "native contact read: pair %zd: pad %lld, geom %lld (pad 0..4, geom 0..%zd)",
                         p, pad, geom, r->G - 1);
            goto done;
        }
        Pair *pr = &pairs[p];
        pr->pad = (int)pad, pr->geom = (int)geom;
        for (int i = 0; i < 3; i++) {
            pr->f[i] = P2(v[2], double, p, i);
            pr->fn_vec[i] = P2(v[4], double, p, i);
        }
        pr->fn = P1(v[3], double, p);
        pr->mu = P1(v[5], double, p);
    }
    if (im.obj != NULL)
        memset(im.buf, 0, sizeof(double) * NPAD * 3 * NPX);
    if (!solve_all(r, &ps, pairs, P, fine, (double *)out.buf, (double *)uns.buf, im.obj ? (double *)im.buf : NULL,
                   D(rot)))
        goto done;
    for (Py_ssize_t p = 0; p < P; p++)
        ((double *)st.buf)[p] = pairs[p].stuck;
    ret = Py_None;
    Py_INCREF(ret);
done:
    free(pairs);
    for (int i = 0; i < 6; i++)
        release(&v[i]);
    release(&out);
    release(&uns);
    release(&st);
    release(&im);
    release(&rot);
    poses_release(&ps);
    return ret;
}

/* read(con_geom (n,2) i32, con_efc_address (n,) i32, con_frame (n,9), con_pos (n,3), con_dist (n,),
 *      con_friction (n,5), efc_force (nefc,), xmat, xpos, geom_xmat, geom_xpos, fine,
 *      taxel_out (N,3) f32, taxel_distal_out (N,3), res_out (5,3), unsensed_out (5,3), rot_out (5,3,3), frac_out (5,),
 *      images_out (5,3,48,32)|None, slide_out (cap, 8))
 * → (accepted, rejected, sliding): the slide rows are the sliding pairs (no stuck point, F_n > 0):
 *   pad, geom, force-weighted contact point (world, 3), normal force vector (distal, 3). */
static PyObject *Reader_read(Reader *r, PyObject *args)
{
    PyObject *o[7], *xm, *xp, *gm, *gp, *to, *tdo, *reso, *uo, *roto, *fro, *imo, *slo;
    int fine;
    if (!r->ready || !r->configured) {
        PyErr_SetString(PyExc_ValueError, r->ready ? "native contact read: read() before configure()"
                                                   : "native contact read: the Reader's tables were not set (__init__ failed)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOpOOOOOOOO:read", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &xm,
                          &xp, &gm, &gp, &fine, &to, &tdo, &reso, &uo, &roto, &fro, &imo, &slo))
        return NULL;
    Py_buffer cg, ce, cf, cp, cd, cfr, efc, tx, txd, res, uns, rot, frac, im, sl;
    Py_buffer *all[] = {&cg, &ce, &cf, &cp, &cd, &cfr, &efc, &tx, &txd, &res, &uns, &rot, &frac, &im, &sl};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        all[i]->obj = NULL;
    Poses ps;
    ps.xmat.obj = ps.xpos.obj = ps.gxmat.obj = ps.gxpos.obj = NULL;
    Pair *pairs = NULL;
    PyObject *ret = NULL;
    const Py_ssize_t S = r->S, N = r->N, G = r->G, G1 = r->G + 1;
    if (!get_view(o[0], &cg, "data.contact.geom", 'i', 2, (Py_ssize_t[]){-1, 2}, 0, 0))
        goto done;
    const Py_ssize_t n = cg.shape[0];
    if (!get_view(o[1], &ce, "data.contact.efc_address", 'i', 1, (Py_ssize_t[]){n}, 0, 0)
        || !get_view(o[2], &cf, "data.contact.frame", 'd', 2, (Py_ssize_t[]){n, 9}, 0, 0)
        || !get_view(o[3], &cp, "data.contact.pos", 'd', 2, (Py_ssize_t[]){n, 3}, 0, 0)
        || !get_view(o[4], &cd, "data.contact.dist", 'd', 1, (Py_ssize_t[]){n}, 0, 0)
        || !get_view(o[5], &cfr, "data.contact.friction", 'd', 2, (Py_ssize_t[]){n, 5}, 0, 0)
        || !get_view(o[6], &efc, "data.efc_force", 'd', 1, (Py_ssize_t[]){-1}, 0, 0)
        || !get_poses(r, &ps, xm, xp, gm, gp)
        || !get_view(to, &tx, "taxel_out", 'f', 2, (Py_ssize_t[]){N, 3}, 1, 1)
        || !get_view(tdo, &txd, "taxel_distal_out", 'd', 2, (Py_ssize_t[]){N, 3}, 1, 1)
        || !get_view(reso, &res, "res_out", 'd', 2, (Py_ssize_t[]){NPAD, 3}, 1, 1)
        || !get_view(uo, &uns, "unsensed_out", 'd', 2, (Py_ssize_t[]){NPAD, 3}, 1, 1)
        || !get_view(roto, &rot, "rot_out", 'd', 3, (Py_ssize_t[]){NPAD, 3, 3}, 1, 1)
        || !get_view(fro, &frac, "frac_out", 'd', 1, (Py_ssize_t[]){NPAD}, 1, 1)
        || !get_view(slo, &sl, "slide_out", 'd', 2, (Py_ssize_t[]){-1, 8}, 1, 1))
        goto done;
    if (imo != Py_None && !get_view(imo, &im, "images_out", 'd', 4, (Py_ssize_t[]){NPAD, 3, IMG_ROWS, IMG_COLS}, 1, 1))
        goto done;
    if (sl.shape[0] < n) {
        PyErr_Format(PyExc_ValueError, "native contact read: slide_out has %zd rows, the frame has %zd contacts",
                     sl.shape[0], n);
        goto done;
    }
    const Py_ssize_t nefc = efc.shape[0];
    double *resv = (double *)res.buf, *fracv = (double *)frac.buf, *rotv = (double *)rot.buf;
    memset(resv, 0, sizeof(double) * NPAD * 3);
    for (int k = 0; k < NPAD; k++) {
        long long b = Q64(r->distal_bodies)[k];
        for (int i = 0; i < 9; i++)
            rotv[9 * k + i] = P2(ps.xmat, double, b, i);
        fracv[k] = 1.0;
    }
    if (im.obj != NULL)
        memset(im.buf, 0, sizeof(double) * NPAD * 3 * NPX);
    pairs = calloc((size_t)(n > 0 ? n : 1), sizeof(Pair));
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const long long *pair_code = Q64(r->pair_code);
    const double *code_slots = D(r->code_slots), *slot_info = D(r->slot_info);
    Py_ssize_t found = 0, accepted = 0, P = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int g0 = P2(cg, int, i, 0), g1 = P2(cg, int, i, 1);
        if (g0 < -1 || g0 >= G || g1 < -1 || g1 >= G) {
            PyErr_Format(PyExc_ValueError, "native contact read: contact %zd: geom ids (%d, %d) outside -1..%zd", i,
                         g0, g1, G - 1);
            goto done;
        }
        long long code = pair_code[(g0 < 0 ? G : g0) * G1 + (g1 < 0 ? G : g1)];
        if (code == 0)
            continue;
        int adr = P1(ce, int, i);
        if (adr < 0)      /* outside the solver: no force */
            continue;
        if ((Py_ssize_t)adr + 3 > nefc) {
            PyErr_Format(PyExc_ValueError, "native contact read: contact %zd: efc_address %d + 3 rows beyond "
                         "efc_force's %zd", i, adr, nefc);
            goto done;
        }
        found++;
        const int ci = (int)((code % NCODE + NCODE) % NCODE);
        const double sign = D(r->code_sign)[ci];
        const long long body = Q64(r->code_body)[ci];
        double rows[9], R[9], rl[9], fc[3], fl[3], pm[3], pl[3];
        for (int j = 0; j < 9; j++) {
            rows[j] = P2(cf, double, i, j) * sign;
            R[j] = P2(ps.xmat, double, body, j);
        }
        for (int a = 0; a < 3; a++)
            fc[a] = P1(efc, double, adr + a);
        for (int a = 0; a < 3; a++)
            for (int j = 0; j < 3; j++)
                rl[3 * a + j] = rows[3 * a] * R[j] + rows[3 * a + 1] * R[3 + j] + rows[3 * a + 2] * R[6 + j];
        double dp[3];
        for (int j = 0; j < 3; j++)
            dp[j] = P2(cp, double, i, j) - P2(ps.xpos, double, body, j);
        const double hd = 0.5 * P1(cd, double, i);
        for (int j = 0; j < 3; j++) {
            fl[j] = fc[0] * rl[j] + fc[1] * rl[3 + j] + fc[2] * rl[6 + j];
            pm[j] = dp[0] * R[j] + dp[1] * R[3 + j] + dp[2] * R[6 + j];
            pl[j] = pm[j] + rl[j] * hd;
        }
        /* active-pad mask: nearest slot within r, palm side, normal alignment */
        const double *sl3 = code_slots + (Py_ssize_t)ci * S * 3;
        double dmin = INFINITY;
        Py_ssize_t nearest = 0;
        for (Py_ssize_t j = 0; j < S; j++) {
            double d0 = sl3[3 * j] - pl[0], d1 = sl3[3 * j + 1] - pl[1], d2 = sl3[3 * j + 2] - pl[2];
            double d = d0 * d0 + d1 * d1 + d2 * d2;
            if (d < dmin) {
                dmin = d;
                nearest = j;
            }
        }
        const double *near = slot_info + (Q64(r->code_slot0)[ci] + nearest) * 4;
        int front = r->side_sign > 0 ? pl[1] > -FRONT_MARGIN : pl[1] < FRONT_MARGIN;
        double align = rl[0] * near[0] + rl[1] * near[1] + rl[2] * near[2];
        if (!(dmin <= near[3] && front && align <= -MIN_NORMAL_ALIGNMENT))
            continue;
        accepted++;
        const int pad = (int)Q64(r->code_pad)[ci];
        const int geom = code > 0 ? g0 : g1;
        for (int j = 0; j < 3; j++)
            resv[3 * pad + j] += fl[j];
        /* `_pairs_of`: group by (pad, geom) */
        Py_ssize_t p = 0;
        while (p < P && !(pairs[p].pad == pad && pairs[p].geom == geom))
            p++;
        Pair *pr = &pairs[p];
        if (p == P) {
            P++;
            pr->pad = pad;
            pr->geom = geom;
        }
        const double fn = fc[0];
        for (int j = 0; j < 3; j++) {
            pr->f[j] += fl[j];
            pr->ex[j] += fn * rl[j];
            pr->ex[4 + j] += fn * P2(cp, double, i, j);
        }
        pr->fn += fn;
        pr->ex[3] += fn * P2(cfr, double, i, 0);
    }
    double *txd_v = (double *)txd.buf;
    float *tx_v = (float *)tx.buf;
    Py_ssize_t sliding = 0;
    if (P == 0) {
        memset(txd_v, 0, sizeof(double) * N * 3);
        memset(tx_v, 0, sizeof(float) * N * 3);
        memset(uns.buf, 0, sizeof(double) * NPAD * 3);
    } else {
        for (Py_ssize_t p = 0; p < P; p++) {
            Pair *pr = &pairs[p];
            double inv = 1.0 / (pr->fn > 1e-300 ? pr->fn : 1e-300);
            pr->mu = pr->fn > 0 ? pr->ex[3] * inv : 1.0;
            for (int j = 0; j < 3; j++)
                pr->fn_vec[j] = pr->ex[j];
        }
        double *slots = malloc(sizeof(double) * NPAD * S * 3);
        if (slots == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        if (!solve_all(r, &ps, pairs, P, fine, slots, (double *)uns.buf, im.obj ? (double *)im.buf : NULL,
                       D(r->pad_rot))) {
            free(slots);
            goto done;
        }
        const long long *ts = Q64(r->taxel_slot);
        const double *trot = D(r->taxel_rot);
        for (Py_ssize_t t = 0; t < N; t++) {
            const double *v = slots + 3 * ts[t];
            const double *m = trot + 9 * t;
            for (int j = 0; j < 3; j++) {
                txd_v[3 * t + j] = v[j];
                tx_v[3 * t + j] = (float)(v[0] * m[j] + v[1] * m[3 + j] + v[2] * m[6 + j]);
            }
        }
        free(slots);
        double *slv = (double *)sl.buf;
        for (Py_ssize_t p = 0; p < P; p++) {
            Pair *pr = &pairs[p];
            if (pr->stuck < fracv[pr->pad])
                fracv[pr->pad] = pr->stuck;
            if (pr->stuck <= 0 && pr->fn > 0) {
                double inv = 1.0 / (pr->fn > 1e-300 ? pr->fn : 1e-300);
                double *row = slv + 8 * sliding++;
                row[0] = pr->pad;
                row[1] = pr->geom;
                for (int j = 0; j < 3; j++) {
                    row[2 + j] = pr->ex[4 + j] * inv;
                    row[5 + j] = pr->ex[j];
                }
            }
        }
    }
    ret = Py_BuildValue("nnn", accepted, found - accepted, sliding);
done:
    free(pairs);
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        release(all[i]);
    poses_release(&ps);
    return ret;
}

static PyMethodDef Reader_methods[] = {
    {"configure", (PyCFunction)Reader_configure, METH_VARARGS, "Set the extraction tables of one ContactForceModel."},
    {"read", (PyCFunction)Reader_read, METH_VARARGS, "The whole frame's read from the MjData arrays."},
    {"solve", (PyCFunction)Reader_solve, METH_VARARGS, "The solution of given pairs (taxel slots, stuck, images)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "wuji_tactile_device.producers.sim._contact_read.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The distributed contact model's compiled per-frame read (contact_model.DistributedContact).",
    .tp_methods = Reader_methods,
    .tp_init = (initproc)Reader_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_contact_read",
    "Compiled per-frame read of the distributed contact model (see contact_read.c).", -1, NULL,
};

PyMODINIT_FUNC PyInit__contact_read(void)
{
    if (PyType_Ready(&ReaderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "ABI", CONTACT_READ_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(&ReaderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
