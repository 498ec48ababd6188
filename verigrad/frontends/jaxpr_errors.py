"""The error of the jaxpr importer (untrusted), in a module of its own so that every
part of the importer can raise it without importing the others."""
from verigrad.kernel.sizes import VerigradError


class JaxprImportError(VerigradError):
    """A function the importer cannot translate; the message names the primitive or the
    dimension and the source line (``located`` once it does). ``bad_input``: the user's
    code or shapes are at fault (it does not trace, a dimension cannot be read), not a
    limit of the importer."""

    def __init__(self, message: str, located: bool = False, bad_input: bool = False):
        super().__init__(message)
        self.located = located
        self.bad_input = bad_input
