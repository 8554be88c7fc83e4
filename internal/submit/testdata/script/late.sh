#!/bin/bash
#BSUB -n 2,4
#BSUB -J 'sweep[1-100:2]%10'

echo "index $LSB_JOBINDEX"
#BSUB -q ignored
cat > next.sh <<'END'
#BSUB -n 8
END
