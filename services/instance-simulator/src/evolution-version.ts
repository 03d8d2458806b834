// The Evolution API release whose webhook payloads the simulator reproduces
// (SIM_EVOLUTION_VERSION / `evolutionVersion`). Each difference is read from the tagged
// source of evolution-foundation/evolution-api and cited where it is shaped (README table).

export const EVOLUTION_VERSIONS = ['2.3.6', '2.3.7', '2.4.0-rc2'] as const;
export type EvolutionVersion = (typeof EVOLUTION_VERSIONS)[number];
export const DEFAULT_EVOLUTION_VERSION: EvolutionVersion = '2.3.7';

export function parseEvolutionVersion(value: string | undefined): EvolutionVersion {
  if (value === undefined || value === '') return DEFAULT_EVOLUTION_VERSION;
  if ((EVOLUTION_VERSIONS as readonly string[]).includes(value)) return value as EvolutionVersion;
  throw new Error(`SIM_EVOLUTION_VERSION must be one of ${EVOLUTION_VERSIONS.join(', ')}`);
}
