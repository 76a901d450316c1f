"""GeoResolver core: inverse-distance attention in Euclidean, hyperbolic and spherical geometry.

The library behind GeoResolver Explorer. It never imports streamlit: pages call into it, and a
researcher can import it or run ``python -m georesolver_core`` headless.
"""

import warnings

# geoopt 0.5.1 decorates functions with torch.jit.script, which torch 2.13 deprecates loudly.
warnings.filterwarnings("ignore", message=r".*torch\.jit.*", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=r".*TorchScript.*", category=DeprecationWarning)

from georesolver_core.device import DTYPES, default_device  # noqa: E402

__version__ = "0.1.0"
__all__ = ["DTYPES", "default_device", "__version__"]
