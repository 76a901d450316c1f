"""WordNet 3.0, read offline from its database files (Debian's ``wordnet-base``, or a folder of the same files).

``database`` parses the documented ``data.*`` / ``index.*`` format (wndb(5WN)) into synsets; the
hierarchy closures and the gloss corpus build on it.
"""

from georesolver_core.wordnet.database import (
    DEFAULT_DIRS,
    LICENCE,
    Pointer,
    Synset,
    find_database,
    read_synsets,
    sense_names,
)

__all__ = ["DEFAULT_DIRS", "LICENCE", "Pointer", "Synset", "find_database", "read_synsets", "sense_names"]
