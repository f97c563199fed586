"""The test suite as a package: ``tests.support`` must resolve here, not to the stray
top-level ``tests`` package that verl 0.9.1 and TransferQueue install into site-packages."""
