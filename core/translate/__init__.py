"""How a component translates itself into framework code: quoted values, snippets, and the calls several translations share."""
