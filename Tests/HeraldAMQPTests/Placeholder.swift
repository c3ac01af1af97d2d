// Tests land with the module.
