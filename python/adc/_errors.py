"""Exceptions of the adc package."""


class AdcError(RuntimeError):
    """Base class of the errors this package raises itself."""


class SignatureError(AdcError, ValueError):
    """The signature (C prototype, outputs, inactive) cannot be used."""


class ToolNotFoundError(AdcError, FileNotFoundError):
    """adc or clang is not installed where the package looks for it."""


class CompileError(AdcError):
    """clang, adc or the linker failed. ``stderr`` holds the tool's own error text and
    ``command`` the command line that failed."""

    def __init__(self, message, command=None, stderr=""):
        super().__init__(message)
        self.command = command
        self.stderr = stderr
