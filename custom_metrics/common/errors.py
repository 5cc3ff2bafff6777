"""The one error type for bad input: it always names the dataset or file, line and field."""


class DataError(RuntimeError):
    """A dataset could not be found or a row does not have the expected schema."""
