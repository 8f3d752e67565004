"""The command line. Importing it first lets dataclasses take the method code the wheel ships compiled
(verifier.app.precompiled): every module the command line imports after this defines its classes faster."""

from verifier.app.precompiled import install

install()
