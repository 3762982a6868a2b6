# ranks: 3
import logging
import sys
from mpi4py import MPI

comm = MPI.COMM_WORLD
logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(levelname)s %(message)s")
log = logging.getLogger("wild")
comm.Barrier()
log.info("rank %d says hi", comm.rank)
