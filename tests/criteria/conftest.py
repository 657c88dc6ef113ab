from tests.fakes.mock_messages import make_client  # noqa: F401  (a fixture)
