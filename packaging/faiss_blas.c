/* The BLAS and LAPACK routines FAISS calls, answered by the OpenBLAS numpy already loads.
 *
 * The faiss-cpu wheel carries its own OpenBLAS (38 MB, with a libgfortran and libquadmath of its
 * own) beside numpy's (25 MB): two builds of the same library in one process. This file is built
 * by packaging/faiss_blas.py into a library of the name FAISS links to, which defines the 14
 * routines FAISS imports and forwards each to numpy's OpenBLAS (scipy-openblas, whose symbols are
 * prefixed `scipy_` and suffixed `64_` and take 64-bit integers: ILP64). FAISS passes 32-bit
 * integers (LP64), so each integer argument, and each integer array (pivots, LAPACK's integer
 * workspace), is widened on the way in and narrowed on the way out. Character arguments get the
 * hidden length arguments gfortran-built LAPACK expects.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef int64_t i64;
typedef int fint;

static void *allocate(size_t count, size_t size) {
    void *memory = malloc(count ? count * size : size);
    if (memory == NULL) abort(); /* FAISS would not survive a failed allocation either */
    return memory;
}

/* ---- BLAS ---------------------------------------------------------------------------------- */

void scipy_sgemm_64_(const char *, const char *, const i64 *, const i64 *, const i64 *, const float *,
                     const float *, const i64 *, const float *, const i64 *, const float *, float *, const i64 *,
                     size_t, size_t);
void scipy_dgemm_64_(const char *, const char *, const i64 *, const i64 *, const i64 *, const double *,
                     const double *, const i64 *, const double *, const i64 *, const double *, double *,
                     const i64 *, size_t, size_t);
void scipy_sgemv_64_(const char *, const i64 *, const i64 *, const float *, const float *, const i64 *,
                     const float *, const i64 *, const float *, float *, const i64 *, size_t);
void scipy_ssyrk_64_(const char *, const char *, const i64 *, const i64 *, const float *, const float *,
                     const i64 *, const float *, float *, const i64 *, size_t, size_t);

int sgemm_(const char *transa, const char *transb, const fint *m, const fint *n, const fint *k, const float *alpha,
           const float *a, const fint *lda, const float *b, const fint *ldb, const float *beta, float *c,
           const fint *ldc) {
    i64 m64 = *m, n64 = *n, k64 = *k, lda64 = *lda, ldb64 = *ldb, ldc64 = *ldc;
    scipy_sgemm_64_(transa, transb, &m64, &n64, &k64, alpha, a, &lda64, b, &ldb64, beta, c, &ldc64, 1, 1);
    return 0;
}

int dgemm_(const char *transa, const char *transb, const fint *m, const fint *n, const fint *k, const double *alpha,
           const double *a, const fint *lda, const double *b, const fint *ldb, const double *beta, double *c,
           const fint *ldc) {
    i64 m64 = *m, n64 = *n, k64 = *k, lda64 = *lda, ldb64 = *ldb, ldc64 = *ldc;
    scipy_dgemm_64_(transa, transb, &m64, &n64, &k64, alpha, a, &lda64, b, &ldb64, beta, c, &ldc64, 1, 1);
    return 0;
}

int sgemv_(const char *trans, const fint *m, const fint *n, const float *alpha, const float *a, const fint *lda,
           const float *x, const fint *incx, const float *beta, float *y, const fint *incy) {
    i64 m64 = *m, n64 = *n, lda64 = *lda, incx64 = *incx, incy64 = *incy;
    scipy_sgemv_64_(trans, &m64, &n64, alpha, a, &lda64, x, &incx64, beta, y, &incy64, 1);
    return 0;
}

int ssyrk_(const char *uplo, const char *trans, const fint *n, const fint *k, const float *alpha, const float *a,
           const fint *lda, const float *beta, float *c, const fint *ldc) {
    i64 n64 = *n, k64 = *k, lda64 = *lda, ldc64 = *ldc;
    scipy_ssyrk_64_(uplo, trans, &n64, &k64, alpha, a, &lda64, beta, c, &ldc64, 1, 1);
    return 0;
}

/* ---- LAPACK -------------------------------------------------------------------------------- */

void scipy_sgesvd_64_(const char *, const char *, const i64 *, const i64 *, float *, const i64 *, float *, float *,
                      const i64 *, float *, const i64 *, float *, const i64 *, i64 *, size_t, size_t);
void scipy_dgesvd_64_(const char *, const char *, const i64 *, const i64 *, double *, const i64 *, double *,
                      double *, const i64 *, double *, const i64 *, double *, const i64 *, i64 *, size_t, size_t);
void scipy_dsyev_64_(const char *, const char *, const i64 *, double *, const i64 *, double *, double *,
                     const i64 *, i64 *, size_t, size_t);
void scipy_sgeqrf_64_(const i64 *, const i64 *, float *, const i64 *, float *, float *, const i64 *, i64 *);
void scipy_sorgqr_64_(const i64 *, const i64 *, const i64 *, float *, const i64 *, const float *, float *,
                      const i64 *, i64 *);
void scipy_sgelsd_64_(const i64 *, const i64 *, const i64 *, float *, const i64 *, float *, const i64 *, float *,
                      const float *, i64 *, float *, const i64 *, i64 *, i64 *);
void scipy_sgetrf_64_(const i64 *, const i64 *, float *, const i64 *, i64 *, i64 *);
void scipy_dgetrf_64_(const i64 *, const i64 *, double *, const i64 *, i64 *, i64 *);
void scipy_sgetri_64_(const i64 *, float *, const i64 *, const i64 *, float *, const i64 *, i64 *);
void scipy_dgetri_64_(const i64 *, double *, const i64 *, const i64 *, double *, const i64 *, i64 *);

int sgesvd_(const char *jobu, const char *jobvt, const fint *m, const fint *n, float *a, const fint *lda, float *s,
            float *u, const fint *ldu, float *vt, const fint *ldvt, float *work, const fint *lwork, fint *info) {
    i64 m64 = *m, n64 = *n, lda64 = *lda, ldu64 = *ldu, ldvt64 = *ldvt, lwork64 = *lwork, info64 = 0;
    scipy_sgesvd_64_(jobu, jobvt, &m64, &n64, a, &lda64, s, u, &ldu64, vt, &ldvt64, work, &lwork64, &info64, 1, 1);
    *info = (fint)info64;
    return 0;
}

int dgesvd_(const char *jobu, const char *jobvt, const fint *m, const fint *n, double *a, const fint *lda, double *s,
            double *u, const fint *ldu, double *vt, const fint *ldvt, double *work, const fint *lwork, fint *info) {
    i64 m64 = *m, n64 = *n, lda64 = *lda, ldu64 = *ldu, ldvt64 = *ldvt, lwork64 = *lwork, info64 = 0;
    scipy_dgesvd_64_(jobu, jobvt, &m64, &n64, a, &lda64, s, u, &ldu64, vt, &ldvt64, work, &lwork64, &info64, 1, 1);
    *info = (fint)info64;
    return 0;
}

int dsyev_(const char *jobz, const char *uplo, const fint *n, double *a, const fint *lda, double *w, double *work,
           const fint *lwork, fint *info) {
    i64 n64 = *n, lda64 = *lda, lwork64 = *lwork, info64 = 0;
    scipy_dsyev_64_(jobz, uplo, &n64, a, &lda64, w, work, &lwork64, &info64, 1, 1);
    *info = (fint)info64;
    return 0;
}

int sgeqrf_(const fint *m, const fint *n, float *a, const fint *lda, float *tau, float *work, const fint *lwork,
            fint *info) {
    i64 m64 = *m, n64 = *n, lda64 = *lda, lwork64 = *lwork, info64 = 0;
    scipy_sgeqrf_64_(&m64, &n64, a, &lda64, tau, work, &lwork64, &info64);
    *info = (fint)info64;
    return 0;
}

int sorgqr_(const fint *m, const fint *n, const fint *k, float *a, const fint *lda, const float *tau, float *work,
            const fint *lwork, fint *info) {
    i64 m64 = *m, n64 = *n, k64 = *k, lda64 = *lda, lwork64 = *lwork, info64 = 0;
    scipy_sorgqr_64_(&m64, &n64, &k64, a, &lda64, tau, work, &lwork64, &info64);
    *info = (fint)info64;
    return 0;
}

int sgelsd_(const fint *m, const fint *n, const fint *nrhs, float *a, const fint *lda, float *b, const fint *ldb,
            float *s, const float *rcond, fint *rank, float *work, const fint *lwork, fint *iwork, fint *info) {
    i64 m64 = *m, n64 = *n, nrhs64 = *nrhs, lda64 = *lda, ldb64 = *ldb, lwork64 = *lwork, rank64 = 0, info64 = 0;
    /* The integer workspace is as long as LAPACK says in a workspace query; ask for that length. */
    i64 query = -1, liwork = 1;
    float work_size;
    scipy_sgelsd_64_(&m64, &n64, &nrhs64, a, &lda64, b, &ldb64, s, rcond, &rank64, &work_size, &query, &liwork,
                     &info64);
    if (*lwork == -1) {
        work[0] = work_size;
        iwork[0] = (fint)liwork;
        *info = (fint)info64;
        return 0;
    }
    i64 *iwork64 = allocate((size_t)(liwork > 1 ? liwork : 1), sizeof(i64));
    scipy_sgelsd_64_(&m64, &n64, &nrhs64, a, &lda64, b, &ldb64, s, rcond, &rank64, work, &lwork64, iwork64, &info64);
    free(iwork64);
    *rank = (fint)rank64;
    *info = (fint)info64;
    return 0;
}

static int getrf(int doubles, const fint *m, const fint *n, void *a, const fint *lda, fint *ipiv, fint *info) {
    i64 m64 = *m, n64 = *n, lda64 = *lda, info64 = 0, pivots = *m < *n ? *m : *n;
    i64 *ipiv64 = allocate((size_t)(pivots > 0 ? pivots : 1), sizeof(i64));
    if (doubles) scipy_dgetrf_64_(&m64, &n64, a, &lda64, ipiv64, &info64);
    else scipy_sgetrf_64_(&m64, &n64, a, &lda64, ipiv64, &info64);
    for (i64 i = 0; i < pivots; i++) ipiv[i] = (fint)ipiv64[i];
    free(ipiv64);
    *info = (fint)info64;
    return 0;
}

static int getri(int doubles, const fint *n, void *a, const fint *lda, const fint *ipiv, void *work,
                 const fint *lwork, fint *info) {
    i64 n64 = *n, lda64 = *lda, lwork64 = *lwork, info64 = 0;
    i64 *ipiv64 = allocate((size_t)(*n > 0 ? *n : 1), sizeof(i64));
    for (i64 i = 0; i < n64; i++) ipiv64[i] = ipiv[i];
    if (doubles) scipy_dgetri_64_(&n64, a, &lda64, ipiv64, work, &lwork64, &info64);
    else scipy_sgetri_64_(&n64, a, &lda64, ipiv64, work, &lwork64, &info64);
    free(ipiv64);
    *info = (fint)info64;
    return 0;
}

int sgetrf_(const fint *m, const fint *n, float *a, const fint *lda, fint *ipiv, fint *info) {
    return getrf(0, m, n, a, lda, ipiv, info);
}

int dgetrf_(const fint *m, const fint *n, double *a, const fint *lda, fint *ipiv, fint *info) {
    return getrf(1, m, n, a, lda, ipiv, info);
}

int sgetri_(const fint *n, float *a, const fint *lda, const fint *ipiv, float *work, const fint *lwork, fint *info) {
    return getri(0, n, a, lda, ipiv, work, lwork, info);
}

int dgetri_(const fint *n, double *a, const fint *lda, const fint *ipiv, double *work, const fint *lwork,
            fint *info) {
    return getri(1, n, a, lda, ipiv, work, lwork, info);
}
