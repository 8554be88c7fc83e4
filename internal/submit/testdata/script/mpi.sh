#!/bin/sh
# A typical MPI job: 64 tasks, 16 per host, 2000 MB each, 12 hours.
#BSUB -J "cfd run"            # the job's name
#BSUB -n 64
#BSUB -R "span[ptile=16]"
#BSUB -R 'rusage[mem=2000]'
#BSUB -R "select[type == X86_64 && ssd]"
#BSUB -W 12:00
#BSUB -q normal
#BSUB -o logs/cfd.%J.out
#BSUB -e logs/cfd.%J.err
#BSUB -P aero
#BSUB -r

module load mpi
mpirun ./cfd --input "case 1.dat"
