"""The parts by name (PARTS="..."): each a function of the Check, runnable alone."""

from . import bench, deploy, gtests, predict, pyparts, ranks, soak, storage


PARTS = {
    "tests": gtests.gpu_tests,
    "ranks": ranks.ranks,
    "kernels": bench.kernels,
    "bench": bench.bench,
    "paths": bench.paths,
    "overhead": bench.overhead,
    "copies": bench.copies,
    "predict": predict.predict,
    "room": predict.room,
    "soak": soak.soak,
    "deploy": deploy.deploy,
    "full": storage.full,
    "peers": storage.peers,
    "sweep": storage.sweep,
    "zoo": pyparts.zoo,
    "hfspeed": pyparts.hfspeed,
    "shuffled": gtests.shuffled_tests,
    "multi": deploy.multi,
    "sanitizer": gtests.sanitizer,
    "properties": gtests.properties,
    "hf": pyparts.hf,
    "python": pyparts.python,
}
