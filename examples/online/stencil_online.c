/*
 * stencil_online: a 1-D MPI stencil that streams its regions and messages to perfscape while
 * it runs (producers/perfscape_stream.h; STREAM.md).
 *
 *   mpicc -O2 -I../../producers stencil_online.c -o stencil_online
 *   perfscape serve --listen tcp://127.0.0.1:7700 &
 *   PERFSCAPE_STREAM=tcp://127.0.0.1:7700 mpirun -np 8 ./stencil_online 400 20000 200
 *
 * Arguments: iterations, cells per rank, sleep per iteration in microseconds (to watch it
 * grow). A profile sample `iteration K` is taken every 10 iterations. Rank r computes
 * 1 + r % 3 sweeps per iteration, so the load is imbalanced on purpose.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "perfscape_stream.h"

static double sweep(double *u, double *v, int n) {
    double r = 0;
    for (int i = 1; i <= n; i++) {
        v[i] = 0.5 * u[i] + 0.25 * (u[i - 1] + u[i + 1]);
        r += (v[i] - u[i]) * (v[i] - u[i]);
    }
    for (int i = 1; i <= n; i++) u[i] = v[i];
    return r;
}

int main(int argc, char **argv) {
    int rank, size;
    int iters = argc > 1 ? atoi(argv[1]) : 200;
    int n = argc > 2 ? atoi(argv[2]) : 20000;
    int pause_us = argc > 3 ? atoi(argv[3]) : 0;
    ps_stream s;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (ps_open(&s, NULL, rank, 0, "stencil_online") != 0 && rank == 0)
        fprintf(stderr, "stencil_online: not streaming (set PERFSCAPE_STREAM=tcp://HOST:PORT)\n");
    ps_enter(&s, "main", NULL);
    double *u = calloc((size_t)n + 2, sizeof *u), *v = calloc((size_t)n + 2, sizeof *v);
    for (int i = 1; i <= n; i++) u[i] = (double)((i * 7 + rank * 13) % 100);
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    for (int it = 1; it <= iters; it++) {
        ps_enter(&s, "timestep", NULL);
        ps_enter(&s, "halo_exchange", NULL);
        MPI_Request req[4];
        ps_enter(&s, "MPI_Irecv()", "MPI");
        MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(&u[n + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
        ps_exit(&s, "MPI_Irecv()");
        ps_enter(&s, "MPI_Isend()", "MPI");
        MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[2]);
        if (left != MPI_PROC_NULL) ps_send(&s, left, sizeof(double));
        MPI_Isend(&u[n], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[3]);
        if (right != MPI_PROC_NULL) ps_send(&s, right, sizeof(double));
        ps_exit(&s, "MPI_Isend()");
        ps_enter(&s, "MPI_Waitall()", "MPI");
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
        if (left != MPI_PROC_NULL) ps_recv(&s, left, sizeof(double));
        if (right != MPI_PROC_NULL) ps_recv(&s, right, sizeof(double));
        ps_exit(&s, "MPI_Waitall()");
        ps_exit(&s, "halo_exchange");
        double local = 0, global = 0;
        ps_enter(&s, "compute", NULL);
        for (int k = 0; k < 1 + rank % 3; k++) local = sweep(u, v, n);
        ps_exit(&s, "compute");
        ps_enter(&s, "MPI_Allreduce()", "MPI");
        MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        ps_exit(&s, "MPI_Allreduce()");
        if (pause_us > 0) usleep((useconds_t)pause_us);
        ps_exit(&s, "timestep");
        if (it % 10 == 0) {
            char name[32];
            snprintf(name, sizeof name, "iteration %d", it);
            ps_counter(&s, "residual", global);
            ps_sample(&s, name);
        }
    }
    ps_exit(&s, "main");
    free(u);
    free(v);
    MPI_Finalize();
    ps_end(&s);
    if (rank == 0) printf("stencil_online: %d ranks, %d iterations done\n", size, iters);
    return 0;
}
