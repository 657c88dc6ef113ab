/**
 * The world map's shapes from `world-atlas` (Natural Earth, public domain), bundled and registered on first
 * use: never fetched from elsewhere at runtime (the CSP is default-src 'self'). Its own chunk, loaded only
 * for map charts.
 */
import { feature } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import world from "world-atlas/countries-110m.json";

type ECharts = { getMap: (name: string) => unknown; registerMap: (name: string, geoJson: never) => void };

export function registerWorld(echarts: ECharts): void {
  if (echarts.getMap("world")) return;
  const topology = world as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>;
  echarts.registerMap("world", feature(topology, topology.objects.countries) as never);
}
