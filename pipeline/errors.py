"""Errors a user can act on. The CLI prints them as one line, without a traceback."""


class PipelineError(Exception):
    """A problem with the inputs or outputs that the user can fix."""

    exit_code = 1


class InputError(PipelineError):
    """Bad or missing input data: the message names the file, the record and what is wrong."""


class ConfigError(PipelineError):
    """A bad config: the message names the file and the key."""

    exit_code = 2
