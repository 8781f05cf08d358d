/* src/core/version.c - the library version, from configure. */
#include "config.h"

#include "tendo/core.h"

const char *tendo_version(void) { return PACKAGE_VERSION; }

#ifdef TENDO_HAVE_CBLAS
#define BLAS_OPTION "blas=cblas"
#else
#define BLAS_OPTION "blas=none (built-in GEMM)"
#endif
#ifdef _OPENMP
#define OPENMP_OPTION " openmp=yes"
#else
#define OPENMP_OPTION " openmp=no"
#endif
#if defined(TENDO_EVENTS) && !TENDO_EVENTS
#define EVENTS_OPTION " events=no"
#else
#define EVENTS_OPTION " events=yes"
#endif

#ifdef TENDO_HAVE_CUDA
#define CUDA_OPTION " cuda=yes"
#else
#define CUDA_OPTION " cuda=no"
#endif

#ifdef TENDO_HAVE_MPI
#define MPI_OPTION " mpi=yes"
#else
#define MPI_OPTION " mpi=no"
#endif
#if defined(TENDO_HAVE_NCCL) && defined(TENDO_CUDA_SIM)
#define NCCL_OPTION " nccl=simulated"
#elif defined(TENDO_HAVE_NCCL)
#define NCCL_OPTION " nccl=yes"
#else
#define NCCL_OPTION " nccl=no"
#endif

#ifdef TENDO_HAVE_TEXT
#define TEXT_OPTION " tokenizers=yes"
#else
#define TEXT_OPTION " tokenizers=no"
#endif

const char *tendo_build_options(void)
{
    return BLAS_OPTION OPENMP_OPTION EVENTS_OPTION CUDA_OPTION MPI_OPTION NCCL_OPTION TEXT_OPTION;
}
